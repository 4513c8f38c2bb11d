"""Bringing a person's history in: reading ChatGPT, Claude and Telegram exports, and the review queue it feeds."""
