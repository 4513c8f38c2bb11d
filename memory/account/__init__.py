"""Who may talk to a companion, how they get in, what they see of it, and how they leave."""
