"""The fleet dashboard: what each host reports of itself, merged over every host."""
