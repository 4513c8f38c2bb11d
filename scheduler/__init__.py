"""What happens when nobody is talking: reflection, the diary, check-ins, reminders, delivery through the outbox."""
