#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""A small cache library.

Used by the randomized window tests: it has most kinds of statements.
"""
from __future__ import annotations

import os
import sys as system
from collections import OrderedDict, defaultdict
from . import helpers
from ..base import (Base,
                    Mixin)

__all__ = ["LruCache", "make_cache"]
VERSION = (1, 2, 3)
DEBUG: bool = False
LIMIT: int
counter = 0
counter += 1
a = b = 7
x, y = 1, 2
settings.debug = True
items[0] = 5
TABLE = {
    "one": 1,
    "two": 2,  # trailing comment
    # a comment inside brackets
    "three": 3,
}
total = 1 + \
    2
name = "a" \
    "b"
check = total \
# the rest of the line was removed
ratio = (total + \

    1)
first = 1; second = 2
third = 3;
print("loaded", file=system.stderr)

if system.version_info >= (3, 8):
    from functools import cached_property
else:
    cached_property = property
    # comment at the end of an else block

try:
    import numpy as np
except ImportError:  # no numpy
    np = None
finally:
    pass


def make_cache(size=128, *args, **kwargs):
    """Make a cache."""
    if size <= 0:
        raise ValueError(f"bad size {size!r:>10}")
    cache = LruCache(size)
    for key, value in kwargs.items():
        cache.put(key, value)
    else:
        pass
    return cache
    # comment at the end of the function


# comment between functions
def helper(x): return x * 2


@helpers.traced
@helpers.timed(unit="ms")
def decorated(a: int, b: "str" = 'x') -> dict:
    # leading comment
    result = {a: b}
    while a > 0:
        a -= 1
        if a == 3:
            break
    else:
        a = -1
    return result


async def fetch(session, url):
    async with session.get(url) as response:
        async for chunk in response.content:
            await process(chunk)
    return await response.text()


class LruCache(Base, Mixin, metaclass=helpers.Meta):
    """Least recently used cache."""

    import threading
    capacity: int
    hits = 0
    misses: int = 0
    _lock = threading.Lock()

    class Node:
        """A list node."""
        __slots__ = ("key", "value", "prev", "next")

        def __init__(self, key, value):
            self.key = key
            self.value = value
            self.prev = self.next = None

        def __repr__(self):
            return f"Node({self.key!r}, {self.value:{8}})"
            # absorbed by __repr__

    # a comment at class level

    def __init__(self, capacity):
        super().__init__()
        self.capacity = capacity
        self.data = OrderedDict()

    @property
    def size(self):
        return len(self.data)

    @size.setter
    def size(self, value):
        raise AttributeError("read only")

    def get(self, key, default=None):
        '''Return the value for key.'''
        try:
            node = self.data.pop(key)
        except KeyError:
            self.misses += 1
            return default
        else:
            self.hits += 1
        self.data[key] = node
        return node.value

    def put(self, key, value):
        with self._lock:
            if key in self.data:
                self.data.pop(key)
            elif len(self.data) >= self.capacity:
                self.data.popitem(last=False)
            self.data[key] = self.Node(key, value)

    def stats(self): return (self.hits, self.misses)

    def ratio(self):
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    if DEBUG:
        def dump(self):
            print(self.data)

    for _name in ("clear", "keys"):
        pass

    pass


@helpers.register
class Registry(dict):
    "Registry of caches."
    default = None

    def register(self, name, cache):
        self[name] = cache
        return cache

    def lookup(self, name):
        def inner(n):
            """Nested docstring."""
            return self.get(n)
        return inner(name)


class Empty: pass


class Config:
    x = 1; y = 2
    z: float = 0.5
    squares = [i * i for i in range(10) if i % 2]
    mapping = {k: v for k, v in zip("ab", "cd")}
    check = lambda self: self.x > 0
    path = os.path.join(
        "a",
        "b",
    )


def closures():
    counter = 0

    def bump():
        nonlocal counter
        counter += 1
        return counter
    global VERSION
    return bump


def continued(a, \
              b):
    assert a \
    # the rest of the line was removed
    return a + \
        b


def walrus(values):
    if (n := len(values)) > 10:
        return n
    return [y for x in values if (y := x * 2) > 3]


def strings():
    a = r"raw \d+ string"
    b = b"bytes \x00"
    c = rb'raw bytes'
    d = """triple
    quoted "string" with 'quotes'
    """
    e = u"unicode é"
    f = F"{a}{b!s}{{literal}}"
    g = f'{"nested"}'
    return a, b, c, d, e, f, g


def dispatch(command, match=None):
    match command.split():
        case ["go", direction]:
            return direction
        case ["quit"] | ["exit"]: return None
        case {"k": value, **rest} if value:
            return rest
        case Point(x=0, y=0) as origin:
            pass
        case _:
            # unknown
            raise ValueError(command)
    match = case = 1
    return match


match VERSION:
    case (1, _, _):
        MAJOR = 1
    case _:
        MAJOR = 0

while False:
    pass

for i in range(3):
    counter += i

with open(__file__) as handle:
    CONTENT = handle.read()

del a
assert counter > 0, "counter"
if __name__ == "__main__":
    main = make_cache
    main()
