"""The chat commands and button presses, shared by every channel."""
