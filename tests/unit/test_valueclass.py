"""`gatecore.valueclass` behaves as `dataclasses` does for what the package uses of it: the same class
written with each decorator, side by side, gives the same constructor, defaults, default factories,
equality, hash, repr, immutability, `replace`, copies, pickles and `dataclasses` introspection."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from gatecore import valueclass as vc

KINDS: dict[str, dict[str, bool]] = {
    "frozen, slots": {"frozen": True, "slots": True},
    "frozen": {"frozen": True},
    "mutable": {},
    "mutable, eq=False": {"eq": False},
    "mutable, slots": {"slots": True},
}


def _pair(kind: dict[str, bool]) -> tuple[type, type]:
    """The same class, once a dataclass and once a value class."""
    made = []
    for decorate, spec in ((dataclasses.dataclass, dataclasses.field), (vc.valueclass, vc.field)):
        class Sample:
            """A sample."""

            name: str
            size: int = 3
            tags: list[str] = spec(default_factory=list)  # type: ignore[misc]
            note: str | None = spec(default=None, repr=False)  # type: ignore[misc]
            cache: dict[str, int] = spec(default_factory=dict, init=False, repr=False)  # type: ignore[misc]

            def label(self) -> str:
                return f"{self.name}/{self.size}"

        made.append(decorate(**kind)(Sample))  # type: ignore[call-overload]
    return made[0], made[1]


@vc.valueclass(frozen=True, slots=True)
class Module:  # a module-level value class: pickle finds it by name
    a: int
    b: tuple[str, ...] = ()


@pytest.mark.parametrize("kind", KINDS.values(), ids=list(KINDS))
def test_a_value_class_behaves_as_the_same_dataclass(kind: dict[str, bool]) -> None:
    dc, val = _pair(kind)
    cases: list[Callable[[type], Any]] = [
        lambda c: c("x"),
        lambda c: c("x", 4),
        lambda c: c(name="x", size=4, tags=["t"], note="n"),
        lambda c: c("y", tags=["a", "b"]),
    ]
    for make in cases:
        d, v = make(dc), make(val)
        assert repr(d) == repr(v)
        assert [getattr(d, f) for f in ("name", "size", "tags", "note", "cache", "label")] != []
        assert [getattr(d, f) for f in ("name", "size", "tags", "note", "cache")] == \
            [getattr(v, f) for f in ("name", "size", "tags", "note", "cache")]
        assert d.label() == v.label()
        assert (d == make(dc)) == (v == make(val))
        assert (d == dc("other")) == (v == val("other"))
        assert (v == object()) is False and (v != object()) is True
        assert (dc.__hash__ is None) == (val.__hash__ is None)
        if dc.__hash__ is not None and kind.get("eq", True):  # frozen: hashed by the fields (a list: unhashable)
            for obj in (d, v):
                with pytest.raises(TypeError):
                    hash(obj)
        assert (hasattr(d, "__dict__"), hasattr(v, "__dict__")) == (not kind.get("slots"),) * 2
        assert d.tags is not make(dc).tags and v.tags is not make(val).tags  # a new list each time
    # the generated constructor takes what the dataclass's takes
    import inspect

    def params(c: type) -> list[tuple[str, object, bool]]:
        return [(p.name, p.kind, p.default is p.empty) for p in inspect.signature(c.__init__).parameters.values()]

    assert params(val) == params(dc)
    # immutability
    v = val("x")
    d = dc("x")
    for obj in (d, v):
        if kind.get("frozen"):
            with pytest.raises(AttributeError):
                obj.size = 5
            with pytest.raises(AttributeError):
                del obj.size
        else:
            obj.size = 5
            assert obj.size == 5
    if kind.get("frozen"):
        with pytest.raises(vc.FrozenInstanceError):
            v.name = "z"
    # constructor errors are the same
    for bad in ((), ("x", 1, [], None, {})):
        with pytest.raises(TypeError):
            dc(*bad)
        with pytest.raises(TypeError):
            val(*bad)
    with pytest.raises(TypeError):
        val("x", cache={})  # init=False
    # replace: ours, and dataclasses' own on a value class
    for rep in (vc.replace, dataclasses.replace):
        r = rep(val("x", tags=["t"]), size=9)
        assert repr(r) == repr(dataclasses.replace(dc("x", tags=["t"]), size=9))
        with pytest.raises(ValueError):
            rep(val("x"), cache={})
        with pytest.raises(TypeError):
            rep(val("x"), nonesuch=1)
    # dataclasses' introspection reads a value class as the dataclass it stands for
    assert dataclasses.is_dataclass(val) and dataclasses.is_dataclass(val("x"))
    assert [(f.name, f.type, f.default, f.default_factory, f.init, f.repr) for f in dataclasses.fields(val)] == \
        [(f.name, f.type, f.default, f.default_factory, f.init, f.repr) for f in dataclasses.fields(dc)]
    assert dataclasses.asdict(val("x", tags=["t"])) == dataclasses.asdict(dc("x", tags=["t"]))
    assert val.__match_args__ == dc.__match_args__
    # copies
    for c in (copy.copy, copy.deepcopy):
        assert repr(c(val("x", tags=["t"]))) == repr(dc("x", tags=["t"]))


def test_frozen_slotted_value_classes_pickle_and_nest() -> None:
    m = Module(1, ("a",))
    assert pickle.loads(pickle.dumps(m)) == m and copy.deepcopy(m) == m
    assert dataclasses.asdict(Module(1, (Module(2),))) == {"a": 1, "b": ({"a": 2, "b": ()},)}  # type: ignore[arg-type]
    assert Module(1) == Module(1) and {Module(1), Module(1)} == {Module(1)} and Module(1) != Module(2)
    twin = dataclasses.make_dataclass("Module", [("a", int), ("b", tuple[str, ...], ())], frozen=True, slots=True)
    assert hash(Module(1, ("x",))) == hash(twin(1, ("x",)))
    assert repr(Module(1)) == "Module(a=1, b=())"


def test_declarations_dataclasses_refuse_are_refused() -> None:
    for decorate in (dataclasses.dataclass, vc.valueclass):
        with pytest.raises(TypeError):
            @decorate
            class Order:  # a field without a default after one with a default
                a: int = 1
                b: int

        with pytest.raises(ValueError):
            @decorate
            class Shared:  # a mutable default, shared by every instance
                a: list[int] = []  # noqa: RUF012
    with pytest.raises(ValueError):
        vc.field(default=1, default_factory=int)


def test_a_value_class_derived_from_another_is_refused_where_it_is_declared() -> None:
    """dataclasses would give the subclass its base's fields first; a value class would not, so the
    declaration is refused rather than made with half its fields."""
    @vc.valueclass(frozen=True)
    class Base:
        a: int

    with pytest.raises(TypeError, match="cannot derive from another value class"):
        @vc.valueclass(frozen=True)
        class Derived(Base):
            b: int


def test_a_method_the_class_defines_is_kept() -> None:
    for decorate in (dataclasses.dataclass(frozen=True), vc.valueclass(frozen=True)):
        @decorate
        class Own:
            a: int

            def __repr__(self) -> str:
                return "own"

            def __eq__(self, other: object) -> bool:
                return True

            def __hash__(self) -> int:
                return 7

        assert repr(Own(1)) == "own" and Own(1) == Own(2) and hash(Own(1)) == 7

    for decorate in (dataclasses.dataclass(frozen=True, slots=True), vc.valueclass(frozen=True, slots=True)):
        @decorate
        class Init:
            a: int

            def __init__(self, text: str) -> None:
                object.__setattr__(self, "a", int(text))

        assert Init("3").a == 3


def test_the_package_makes_its_value_classes_with_one_idiom() -> None:
    """No module of the package creates a class with `dataclasses` (docs/architecture.md, "Value
    classes"): they use `gatecore.valueclass`, whose classes cost the hook's start-up a fraction."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    found = [str(p.relative_to(root)) for pkg in ("gatecore", "server", "hooks") for p in (root / pkg).rglob("*.py")
             if p.name != "valueclass.py" and ("@dataclass" in p.read_text() or "import dataclasses" in p.read_text()
                                                or "from dataclasses import" in p.read_text())]
    assert found == []


# --- typing's class forms without typing (the hooks' modules take these at run time) ---------------

def _named(base: Any) -> type:
    class Walked(base):  # type: ignore[misc,valid-type]
        """A walked commit."""

        id: str
        parents: tuple[str, ...]
        header: bytes
        headed: bool = True
        shallow: bool = False

        @property
        def first(self) -> str | None:
            return self.parents[0] if self.parents else None

        def label(self) -> str:
            return f"{self.id}:{len(self.parents)}"

    return Walked


def test_the_named_tuple_stand_in_makes_what_typing_makes() -> None:
    import typing

    ours, theirs = _named(vc.NamedTuple), _named(typing.NamedTuple)
    for cls in (ours, theirs):
        assert issubclass(cls, tuple) and cls.__mro__[1:] == (tuple, object)
    assert ours._fields == theirs._fields == ("id", "parents", "header", "headed", "shallow")
    assert ours._field_defaults == theirs._field_defaults == {"headed": True, "shallow": False}
    assert ours.__doc__ == theirs.__doc__ == "A walked commit."
    assert (ours.__name__, ours.__qualname__, ours.__module__) == (theirs.__name__, theirs.__qualname__,
                                                                   theirs.__module__)
    assert list(ours.__annotations__) == list(theirs.__annotations__)
    a, b = ours("c1", ("p",), b"h"), theirs("c1", ("p",), b"h")
    assert tuple(a) == tuple(b) == ("c1", ("p",), b"h", True, False)
    assert repr(a).replace("Walked", "X") == repr(b).replace("Walked", "X")
    assert (a.first, a.label()) == (b.first, b.label()) == ("p", "c1:1")
    assert a._replace(headed=False) == b._replace(headed=False)
    assert a._asdict() == b._asdict()
    assert ours._make(["x", (), b"", True, True]) == theirs._make(["x", (), b"", True, True])
    assert ours("x", (), b"", shallow=True).shallow and copy.copy(a) == a


def test_the_named_tuple_stand_in_refuses_what_typing_refuses() -> None:
    import typing

    for base in (vc.NamedTuple, typing.NamedTuple):
        with pytest.raises(TypeError):
            class Bad(base):  # type: ignore[misc,valid-type]
                a: int = 1
                b: int
        with pytest.raises(AttributeError):
            class Worse(base):  # type: ignore[misc,valid-type]
                a: int

                def _replace(self) -> None: ...


def test_named_tuples_the_hooks_make_pickle() -> None:
    from gatecore.git.gitmodel import WalkedCommit

    w = WalkedCommit("c", ("p",), b"tree t\n", b"m")
    assert pickle.loads(pickle.dumps(w)) == w and type(pickle.loads(pickle.dumps(w))) is WalkedCommit


def test_a_literal_is_the_tuple_of_its_values_at_run_time() -> None:
    import typing

    from gatecore.configuration import configschema, policy
    from gatecore.signing import keys

    assert vc.Literal["a", "b"] == ("a", "b") and vc.Literal["a"] == ("a",)
    assert vc.choices(vc.Literal["a", "b"]) == vc.choices(typing.Literal["a", "b"]) == ("a", "b")
    assert policy.Mode == ("enforce", "evaluate") and keys.ALGORITHMS == ("ed25519", "hmac-sha256")
    # what pydantic validates with is typing's own Literal of the same values
    for name in ("Mode", "RefAction", "ReplaceAction", "ModeAction", "AnonymousAction", "Independence", "ModelRun"):
        made = getattr(configschema, name)
        assert typing.get_origin(made) is typing.Literal and typing.get_args(made) == getattr(policy, name), name
    for name in ("Algorithm", "Purpose"):
        assert typing.get_args(getattr(configschema, name)) == getattr(keys, name), name


@pytest.mark.parametrize("kind", KINDS.values(), ids=list(KINDS))
def test_the_constructor_before_it_is_generated_makes_what_the_generated_one_makes(kind: dict[str, bool]) -> None:
    """A class's first `GENERATED_AFTER` instances are made without generating its `__init__`
    (an `exec`, most of a class's cost): the same fields, defaults, factories and errors as after."""
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        (("x",), {}), (("x", 4), {}), ((), {"name": "x", "size": 4, "tags": ["t"], "note": "n"}),
        (("y",), {"tags": ["a"]}), ((), {}), (("x", 1, [], None, 9), {}), (("x",), {"name": "y"}),
        (("x",), {"cache": {}}), (("x",), {"nope": 1}),
    ]

    def made(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        try:
            obj = cls(*args, **kwargs)
        except TypeError as exc:
            return ("TypeError", str(exc).replace(cls.__qualname__, "C"))
        return (repr(obj), [getattr(obj, f) for f in ("name", "size", "tags", "note", "cache")])

    after = _pair(kind)[1]
    for _ in range(vc.GENERATED_AFTER + 1):
        after("warm")  # (its own `__init__` generated now)
    assert type(after.__dict__["__init__"]).__name__ == "function"
    for args, kwargs in calls:
        before = _pair(kind)[1]  # (a class of its own for each call: an error generates its `__init__`)
        assert type(before.__dict__["__init__"]).__name__ == "_DeferredInit"
        assert made(before, args, kwargs) == made(after, args, kwargs), (args, kwargs)
    import inspect

    assert inspect.signature(_pair(kind)[1].__init__) == inspect.signature(after.__init__)


@pytest.mark.parametrize("kind", KINDS.values(), ids=list(KINDS))
def test_a_field_named_as_the_deferred_constructor_s_own_parameters_is_given_by_keyword(kind: dict[str, bool]) -> None:
    """The constructor before its generation binds the instance positionally only: a field named
    `obj`, `args` or `kwargs` is given by keyword as the generated `__init__` (and dataclasses') takes it."""

    def declared() -> type:
        @vc.valueclass(**kind)
        class Named:
            obj: int
            args: int = 0
            kwargs: int = 0

        return Named

    fresh = declared()
    assert type(fresh.__dict__["__init__"]).__name__ == "_DeferredInit"
    made = fresh(obj=1, args=2, kwargs=3)
    warm = declared()
    for _ in range(vc.GENERATED_AFTER + 1):
        warm(0)
    assert (made.obj, made.args, made.kwargs) == (1, 2, 3) == tuple(vars_of(warm(obj=1, args=2, kwargs=3)))


def vars_of(obj: Any) -> list[Any]:
    return [getattr(obj, f.name) for f in vc.fields(obj)]
