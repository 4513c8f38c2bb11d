"""Telegram: python-telegram-bot in front of the engine and the commands."""
