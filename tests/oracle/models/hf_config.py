"""Reading a Hugging Face config.json: the file, and typed values with the
config class's defaults where the file leaves a key out (Hugging Face saves
only what differs from the defaults)."""

import json
import os


def load_config(config):
    """The config as a dict: `config` is a dict (copied), a path to a
    config.json, or a directory that holds one. Raises OSError for a file
    that cannot be read, ValueError for one that is not a JSON object."""
    if isinstance(config, dict):
        return dict(config)
    if not isinstance(config, (str, os.PathLike)):
        raise TypeError("config: expected a dict or a path, got "
                        f"{type(config).__name__}")
    path = os.fspath(config)
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    with open(path, encoding="utf-8") as f:
        try:
            raw = json.load(f)
        except ValueError as error:
            raise ValueError(f"{path}: not JSON: {error}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: not a JSON object")
    return raw


class HfConfig:
    """Typed access to a config dict; a key the dict leaves out takes its
    value from `defaults`, the config class's defaults. A key set to null
    is None, as transformers' config classes take it: an optional size
    then takes its derived value, any other accessor refuses it.
    Accessors raise ValueError naming the key for a missing or ill-typed
    value."""

    def __init__(self, raw, defaults):
        self._raw = raw
        self._defaults = defaults
        self.read = set()  # every key asked for, in the config or not

    def _value(self, key):
        self.read.add(key)
        if key in self._raw:
            return self._raw[key]
        return self._defaults.get(key)

    def is_set(self, key):
        """Whether the config (or the defaults, where it leaves the key
        out) gives `key` a value other than null."""
        return self._value(key) is not None

    def size(self, key):
        """A positive integer: a dimension or a count."""
        value = self._value(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"config {key}: expected a positive integer, "
                             f"got {value!r}")
        return value

    def count(self, key):
        """A non-negative integer: a count that may be zero."""
        value = self._value(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"config {key}: expected a non-negative "
                             f"integer, got {value!r}")
        return value

    def int_list(self, key):
        """A list of integers (null: empty)."""
        value = self._value(key)
        if value is None:
            return []
        if not isinstance(value, list) or any(
                isinstance(v, bool) or not isinstance(v, int) for v in value):
            raise ValueError(f"config {key}: expected a list of integers, "
                             f"got {value!r}")
        return value

    def optional_size(self, key):
        """A positive integer, or None where the config and the defaults
        leave it unset."""
        return None if self._value(key) is None else self.size(key)

    def flag(self, key):
        """true or false."""
        value = self._value(key)
        if not isinstance(value, bool):
            raise ValueError(f"config {key}: expected true or false, "
                             f"got {value!r}")
        return value

    def text(self, key):
        """A string."""
        value = self._value(key)
        if not isinstance(value, str):
            raise ValueError(f"config {key}: expected a string, got {value!r}")
        return value


def divisible(numerator, denominator, what):
    """numerator // denominator; ValueError (as Hugging Face's constructors
    raise) where it does not divide evenly."""
    if numerator % denominator:
        raise ValueError(f"{what}: {numerator} is not divisible by "
                         f"{denominator}")
    return numerator // denominator
