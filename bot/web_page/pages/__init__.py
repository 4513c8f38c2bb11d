"""The web page's sections, one module each; each declares its `Page`s and its place in the menu."""
