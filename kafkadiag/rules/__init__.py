"""The rule engine and its catalogue (one module per rule, kdNNN_name.py)."""
