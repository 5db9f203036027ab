# functools' wrappers, as the snippet's own code.
#
# `update_wrapper` reads and writes with the snippet's own getattr/setattr, so it copies from a
# host object only what the snippet could read (names and docs) and changes only what the
# snippet may change (its own functions and objects). The caches wrap a function in the C
# `_lru_cache_wrapper` through the `cache_wrapper` kernel, which names it with the same rules.

WRAPPER_ASSIGNMENTS = ("__module__", "__name__", "__qualname__", "__doc__", "__annotations__")
WRAPPER_UPDATES = ("__dict__",)


def update_wrapper(wrapper, wrapped, assigned=WRAPPER_ASSIGNMENTS, updated=WRAPPER_UPDATES):
    """Update a wrapper function to look like the wrapped function.

    wrapper is the function to be updated
    wrapped is the original function
    assigned is a tuple naming the attributes assigned directly
    from the wrapped function to the wrapper function (defaults to
    functools.WRAPPER_ASSIGNMENTS)
    updated is a tuple naming the attributes of the wrapper that
    are updated with the corresponding attribute from the wrapped
    function (defaults to functools.WRAPPER_UPDATES)
    """
    if assigned is WRAPPER_ASSIGNMENTS and updated is WRAPPER_UPDATES and wrap_function(wrapper, wrapped):
        return wrapper
    if not owns(wrapper):
        raise TypeError("functools.update_wrapper() only changes the snippet's own functions")
    own = owns(wrapped)
    for attr in assigned:
        if attr == "__annotations__":
            if own:
                copy_annotations(wrapper, wrapped)
            continue
        try:
            value = getattr(wrapped, attr)
        except AttributeError:
            continue
        if not own and not (value is None or isinstance(value, str)):
            continue
        setattr(wrapper, attr, value)
    if not own:
        return wrapper
    for attr in updated:
        try:
            value = getattr(wrapped, attr)
        except AttributeError:
            value = {}
        getattr(wrapper, attr).update(value)
    wrapper.__wrapped__ = wrapped
    return wrapper


def wraps(wrapped, assigned=WRAPPER_ASSIGNMENTS, updated=WRAPPER_UPDATES):
    """Decorator factory to apply update_wrapper() to a wrapper function.

    Returns a decorator that invokes update_wrapper() with the decorated
    function as the wrapper argument and the arguments to wraps() as the
    remaining arguments.
    """

    def decorate(wrapper):
        return update_wrapper(wrapper, wrapped, assigned, updated)

    return decorate


def lru_cache(maxsize=128, typed=False):
    """Least-recently-used cache decorator.

    If *maxsize* is set to None, the LRU features are disabled and the cache
    can grow without bound.

    If *typed* is True, arguments of different types will be cached separately.
    """
    if isinstance(maxsize, int):
        maxsize = int(maxsize)
        if maxsize < 0:
            maxsize = 0
    elif callable(maxsize) and isinstance(typed, bool):
        return cache_wrapper(maxsize, 128, bool(typed))
    elif maxsize is not None:
        raise TypeError("Expected first argument to be an integer, a callable, or None")
    typed = bool(typed)

    def decorating_function(user_function):
        return cache_wrapper(user_function, maxsize, typed)

    return decorating_function


def cache(user_function, /):
    """Simple lightweight unbounded cache. Sometimes called "memoize"."""
    return cache_wrapper(user_function, None, False)
