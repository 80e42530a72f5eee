"""HTTP: one thin router per capability; `errors.py` is the only place errors become HTTP."""
