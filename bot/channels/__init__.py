"""The messengers: the port, access and pairing, streaming previews, pushes, the terminal; Telegram and Matrix."""
