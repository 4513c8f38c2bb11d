"""The operator's commands: doctor, stats, export and import, companions, the outside view."""
