"""A least-recently-used cache with a fixed capacity."""

from collections import OrderedDict

MISSING = object()


class LRUCache:
    """Keeps the ``capacity`` most recently used entries; the least recently used one is evicted first."""

    def __init__(self, capacity: int = 128):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._data = OrderedDict()

    def get(self, key, default=None):
        """Return the value for ``key`` and mark it as most recently used, or ``default``."""
        value = self._data.get(key, MISSING)
        if value is MISSING:
            return default
        self._data.move_to_end(key)
        return value

    def put(self, key, value):
        """Store ``value`` under ``key``, evicting the least recently used entry when full."""
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self.capacity:
            self._data.popitem(last=False)


def cached(capacity=128):
    """Decorator memoising a one-argument function in an LRUCache."""
    cache = LRUCache(capacity)

    def wrap(fn):
        def inner(arg):
            hit = cache.get(arg, MISSING)
            if hit is MISSING:
                hit = fn(arg)
                cache.put(arg, hit)
            return hit
        return inner
    return wrap
