# contextlib, as the snippet's own code (restricted Python, compiled under the snippet policy).
#
# Every object here is the run's own: the context managers it builds read and call the
# snippet's objects with exactly the snippet's rights. Differences from CPython 3.11: a
# re-raised exception keeps the traceback it has (a snippet cannot assign __traceback__), and
# ExitStack does not consult sys.exc_info() when it repairs __context__ chains.

from collections import deque


class AbstractContextManager:
    """An abstract base class for context managers."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None


class AbstractAsyncContextManager:
    """An abstract base class for asynchronous context managers."""

    async def __aenter__(self):
        return self

    async def __aexit__(self, exc_type, exc_value, traceback):
        return None


class ContextDecorator:
    """A base class that lets a context manager also be used as a decorator."""

    def _recreate_cm(self):
        return self

    def __call__(self, func):
        def inner(*args, **kwds):
            with self._recreate_cm():
                return func(*args, **kwds)

        copy_names(inner, func)
        return inner


class AsyncContextDecorator:
    """A base class that lets an async context manager also be used as a decorator."""

    def _recreate_cm(self):
        return self

    def __call__(self, func):
        async def inner(*args, **kwds):
            async with self._recreate_cm():
                return await func(*args, **kwds)

        copy_names(inner, func)
        return inner


def copy_names(wrapper, wrapped):
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            value = getattr(wrapped, name)
        except AttributeError:
            continue
        if value is None or isinstance(value, str):
            setattr(wrapper, name, value)
    try:
        wrapper.__wrapped__ = wrapped
    except (AttributeError, TypeError):
        pass


class GeneratorContextManagerBase:
    def __init__(self, func, args, kwds):
        self.gen = func(*args, **kwds)
        self.func = func
        self.args = args
        self.kwds = kwds

    def _recreate_cm(self):
        return type(self)(self.func, self.args, self.kwds)


class _GeneratorContextManager(GeneratorContextManagerBase, AbstractContextManager, ContextDecorator):
    """Helper for @contextmanager."""

    def __enter__(self):
        del self.args, self.kwds, self.func
        try:
            return next(self.gen)
        except StopIteration:
            raise RuntimeError("generator didn't yield") from None

    def __exit__(self, typ, value, traceback):
        if typ is None:
            try:
                next(self.gen)
            except StopIteration:
                return False
            else:
                raise RuntimeError("generator didn't stop")
        if value is None:
            value = typ()
        try:
            self.gen.throw(value)
        except StopIteration as exc:
            return exc is not value
        except RuntimeError as exc:
            if exc is value:
                return False
            if isinstance(value, StopIteration) and exc.__cause__ is value:
                return False
            raise
        except BaseException as exc:
            if exc is not value:
                raise
            return False
        raise RuntimeError("generator didn't stop after throw()")


class _AsyncGeneratorContextManager(GeneratorContextManagerBase, AbstractAsyncContextManager,
                                    AsyncContextDecorator):
    """Helper for @asynccontextmanager."""

    async def __aenter__(self):
        del self.args, self.kwds, self.func
        try:
            return await anext(self.gen)
        except StopAsyncIteration:
            raise RuntimeError("generator didn't yield") from None

    async def __aexit__(self, typ, value, traceback):
        if typ is None:
            try:
                await anext(self.gen)
            except StopAsyncIteration:
                return False
            else:
                raise RuntimeError("generator didn't stop")
        if value is None:
            value = typ()
        try:
            await self.gen.athrow(value)
        except StopAsyncIteration as exc:
            return exc is not value
        except RuntimeError as exc:
            if exc is value:
                return False
            if isinstance(value, (StopIteration, StopAsyncIteration)) and exc.__cause__ is value:
                return False
            raise
        except BaseException as exc:
            if exc is not value:
                raise
            return False
        raise RuntimeError("generator didn't stop after athrow()")


def contextmanager(func):
    """@contextmanager decorator: a generator function becomes a context manager factory."""

    def helper(*args, **kwds):
        return _GeneratorContextManager(func, args, kwds)

    copy_names(helper, func)
    return helper


def asynccontextmanager(func):
    """@asynccontextmanager decorator: an async generator function becomes an async context
    manager factory."""

    def helper(*args, **kwds):
        return _AsyncGeneratorContextManager(func, args, kwds)

    copy_names(helper, func)
    return helper


class closing(AbstractContextManager):
    """Context to automatically close something at the end of a block."""

    def __init__(self, thing):
        self.thing = thing

    def __enter__(self):
        return self.thing

    def __exit__(self, *exc_info):
        self.thing.close()


class aclosing(AbstractAsyncContextManager):
    """Async context manager for safely finalizing an asynchronous generator or another object
    with an `aclose()` method."""

    def __init__(self, thing):
        self.thing = thing

    async def __aenter__(self):
        return self.thing

    async def __aexit__(self, *exc_info):
        await self.thing.aclose()


class suppress(AbstractContextManager):
    """Context manager to suppress the given exceptions."""

    def __init__(self, *exceptions):
        self._exceptions = exceptions

    def __enter__(self):
        pass

    def __exit__(self, exctype, excinst, exctb):
        return exctype is not None and issubclass(exctype, self._exceptions)


class nullcontext(AbstractContextManager, AbstractAsyncContextManager):
    """Context manager that does no additional processing."""

    def __init__(self, enter_result=None):
        self.enter_result = enter_result

    def __enter__(self):
        return self.enter_result

    def __exit__(self, *excinfo):
        pass

    async def __aenter__(self):
        return self.enter_result

    async def __aexit__(self, *excinfo):
        pass


def fix_exception_context(new_exc, old_exc):
    # Make `old_exc` the context at the end of `new_exc`'s chain, as if the exits had nested.
    seen = set()
    while True:
        exc_context = new_exc.__context__
        if exc_context is None or exc_context is old_exc:
            return
        if id(exc_context) in seen:
            break
        seen.add(id(exc_context))
        new_exc = exc_context
    new_exc.__context__ = old_exc


def missing_protocol(cm, what):
    cls = type(cm)
    return TypeError(f"'{cls.__module__}.{cls.__qualname__}' object does not support the "
                     f"{what} protocol")


class BaseExitStack:
    def __init__(self):
        self._exit_callbacks = deque()

    def pop_all(self):
        """Preserve the context stack by transferring it to a new instance."""
        new_stack = type(self)()
        new_stack._exit_callbacks = self._exit_callbacks
        self._exit_callbacks = deque()
        return new_stack

    def push(self, exit):
        """Register an exit callback: a context manager's __exit__, or any callable taking
        (exc_type, exc, tb)."""
        try:
            exit_method = type(exit).__exit__
        except AttributeError:
            self._push_exit_callback(exit, True)
        else:
            self._push_cm_exit(exit, exit_method)
        return exit

    def enter_context(self, cm):
        """Enter the supplied context manager and push its __exit__."""
        cls = type(cm)
        try:
            enter = cls.__enter__
            exit = cls.__exit__
        except AttributeError:
            raise missing_protocol(cm, "context manager") from None
        result = enter(cm)
        self._push_cm_exit(cm, exit)
        return result

    def callback(self, callback, /, *args, **kwds):
        """Register an arbitrary callback and arguments; it cannot suppress exceptions."""

        def exit_wrapper(exc_type, exc, tb):
            callback(*args, **kwds)

        exit_wrapper.__wrapped__ = callback
        self._push_exit_callback(exit_wrapper, True)
        return callback

    def _push_cm_exit(self, cm, cm_exit):
        def exit_wrapper(exc_type, exc, tb):
            return cm_exit(cm, exc_type, exc, tb)

        self._push_exit_callback(exit_wrapper, True)

    def _push_exit_callback(self, callback, is_sync=True):
        self._exit_callbacks.append((is_sync, callback))


class ExitStack(BaseExitStack, AbstractContextManager):
    """Context manager for dynamic management of a stack of exit callbacks."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_details):
        received_exc = exc_details[0] is not None
        suppressed_exc = False
        pending_raise = False
        while self._exit_callbacks:
            is_sync, cb = self._exit_callbacks.pop()
            try:
                if cb(*exc_details):
                    suppressed_exc = True
                    pending_raise = False
                    exc_details = (None, None, None)
            except BaseException as new_exc:
                if exc_details[1] is not None:
                    fix_exception_context(new_exc, exc_details[1])
                pending_raise = True
                exc_details = (type(new_exc), new_exc, None)
        if pending_raise:
            fixed_ctx = exc_details[1].__context__
            try:
                raise exc_details[1]
            except BaseException:
                exc_details[1].__context__ = fixed_ctx
                raise
        return received_exc and suppressed_exc

    def close(self):
        """Immediately unwind the context stack."""
        self.__exit__(None, None, None)


class AsyncExitStack(BaseExitStack, AbstractAsyncContextManager):
    """Async context manager for dynamic management of a stack of exit callbacks."""

    async def enter_async_context(self, cm):
        """Enter the supplied async context manager and push its __aexit__."""
        cls = type(cm)
        try:
            enter = cls.__aenter__
            exit = cls.__aexit__
        except AttributeError:
            raise missing_protocol(cm, "asynchronous context manager") from None
        result = await enter(cm)

        async def exit_wrapper(exc_type, exc, tb):
            return await exit(cm, exc_type, exc, tb)

        self._push_exit_callback(exit_wrapper, False)
        return result

    def push_async_exit(self, exit):
        """Register an async exit callback (a coroutine function taking exc_type, exc, tb) or
        an async context manager's __aexit__."""
        try:
            exit_method = type(exit).__aexit__
        except AttributeError:
            self._push_exit_callback(exit, False)
        else:
            cm = exit

            async def exit_wrapper(exc_type, exc, tb):
                return await exit_method(cm, exc_type, exc, tb)

            self._push_exit_callback(exit_wrapper, False)
        return exit

    def push_async_callback(self, callback, /, *args, **kwds):
        """Register an arbitrary coroutine function and arguments; it cannot suppress
        exceptions."""

        async def exit_wrapper(exc_type, exc, tb):
            await callback(*args, **kwds)

        exit_wrapper.__wrapped__ = callback
        self._push_exit_callback(exit_wrapper, False)
        return callback

    async def aclose(self):
        """Immediately unwind the context stack."""
        await self.__aexit__(None, None, None)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_details):
        received_exc = exc_details[0] is not None
        suppressed_exc = False
        pending_raise = False
        while self._exit_callbacks:
            is_sync, cb = self._exit_callbacks.pop()
            try:
                if is_sync:
                    cb_suppress = cb(*exc_details)
                else:
                    cb_suppress = await cb(*exc_details)
                if cb_suppress:
                    suppressed_exc = True
                    pending_raise = False
                    exc_details = (None, None, None)
            except BaseException as new_exc:
                if exc_details[1] is not None:
                    fix_exception_context(new_exc, exc_details[1])
                pending_raise = True
                exc_details = (type(new_exc), new_exc, None)
        if pending_raise:
            fixed_ctx = exc_details[1].__context__
            try:
                raise exc_details[1]
            except BaseException:
                exc_details[1].__context__ = fixed_ctx
                raise
        return received_exc and suppressed_exc
