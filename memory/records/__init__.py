"""What is remembered about a person and the companion: notes, people, profile, reminders, the inner life."""
