"""What happened, kept so it can be shown, undone or never done twice: journal, audit, inbox, outbox, runs."""
