# typing's functions that change the class they get, as the snippet's own code.


def runtime_checkable(cls):
    """Mark a protocol class as a runtime protocol, so that isinstance() and issubclass() check
    it structurally. Applies to the snippet's own protocol classes only."""
    return mark_runtime_protocol(cls)
