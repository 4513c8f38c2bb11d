"""What the companion learns and unlearns after a reply: extraction, summary, corrections, why, forgetting."""
