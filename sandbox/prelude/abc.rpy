# abc, as the snippet's own code (restricted Python, compiled under the snippet policy).
#
# `ABC` is the real `abc.ABC`: its metaclass computes a class's abstract methods from the class
# body, and CPython itself refuses to instantiate a class that still has some. `abstractmethod`
# marks only the snippet's own functions (the stdlib's writes an attribute on any object).


def abstractmethod(funcobj):
    """A decorator indicating abstract methods: a class whose metaclass is ABCMeta (a subclass of
    ABC) cannot be instantiated until all of its abstract methods are overridden."""
    return mark_abstract(funcobj)
