"""One object per `git fsck` message id, built byte for byte, and what git and the gate make of it.

Each `Case` builds, on top of a seeded server's base commit, an agent's commit that writes the
frozen `ci/deploy.yml` and carries the object the message id names (an odd ident, tree entry,
header, tag...). The frozen write is what lets a push show that the gate *decided* the object
(`GATE-FROZEN-PATH`: it read the identity and the tree and judged them) rather than refused to
read it (`GATE-GIT-MALFORMED`). Ident cases put the odd ident on the author and a human on the
committer, so that the author's email, read wrongly, would let the write through.

`Case.default` / `Case.fsck` say what git's own `receive-pack` does with the object (no hook),
without and with `receive.fsckObjects`; `Case.gate` what the gate does: "decide", or the code it
refuses with, or "git" where git refuses before the hook runs. tests/push/test_objects.py checks
every column against real pushes, and docs/security.md holds the same table (a test compares).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .gitutil import git_bytes

AGENT_IDENT = b"Agent Smith <bot-7@agents.example.com> 1790000000 +0000"
HUMAN_IDENT = b"Hana Human <hana@example.com> 1790000000 +0000"
AGENT_EMAIL = "bot-7@agents.example.com"

#: git 2.39's message ids (`git help --config`, fsck.*: the list of fsck.h's FOREACH_FSCK_MSG_ID).
FSCK_IDS_239 = (
    "badDate", "badDateOverflow", "badEmail", "badFilemode", "badName", "badObjectSha1", "badParentSha1",
    "badTagName", "badTimezone", "badTree", "badTreeSha1", "badType", "duplicateEntries", "emptyName",
    "extraHeaderEntry", "fullPathname", "gitattributesBlob", "gitattributesLarge", "gitattributesLineLength",
    "gitattributesMissing", "gitattributesSymlink", "gitignoreSymlink", "gitmodulesBlob", "gitmodulesLarge",
    "gitmodulesMissing", "gitmodulesName", "gitmodulesParse", "gitmodulesPath", "gitmodulesSymlink",
    "gitmodulesUpdate", "gitmodulesUrl", "hasDot", "hasDotdot", "hasDotgit", "mailmapSymlink", "missingAuthor",
    "missingCommitter", "missingEmail", "missingNameBeforeEmail", "missingObject", "missingSpaceBeforeDate",
    "missingSpaceBeforeEmail", "missingTag", "missingTagEntry", "missingTaggerEntry", "missingTree",
    "missingType", "missingTypeEntry", "multipleAuthors", "nulInCommit", "nulInHeader", "nullSha1",
    "treeNotSorted", "unknownType", "unterminatedHeader", "zeroPaddedDate", "zeroPaddedFilemode",
)
#: Ids of later git releases (fsck.h up to 2.50): one about trees, the rest (with their level) about
#: the ref store (`git refs verify`), which no pushed object can carry.
FSCK_IDS_NEWER_OBJECTS = ("largePathname",)
FSCK_IDS_NEWER_REFS = {
    "badPackedRefEntry": "ERROR", "badPackedRefHeader": "ERROR", "badRefContent": "ERROR", "badRefFiletype": "ERROR",
    "badRefName": "ERROR", "badReferentName": "ERROR", "packedRefEntryNotTerminated": "ERROR",
    "packedRefUnsorted": "ERROR", "emptyPackedRefsFile": "INFO", "refMissingNewline": "INFO", "symlinkRef": "INFO",
    "symrefTargetIsNotARef": "INFO", "trailingRefContent": "INFO",
}


#: Each id's level in git's fsck.h: FATAL and ERROR refuse under receive.fsckObjects, and so does
#: WARN (receive-pack checks strictly, which makes warnings errors); INFO is a warning, IGNORE silent.
LEVELS = {
    **dict.fromkeys(("nulInHeader", "unterminatedHeader"), "FATAL"),
    **dict.fromkeys((
        "badDate", "badDateOverflow", "badEmail", "badName", "badObjectSha1", "badParentSha1", "badTimezone",
        "badTree", "badTreeSha1", "badType", "duplicateEntries", "missingAuthor", "missingCommitter",
        "missingEmail", "missingNameBeforeEmail", "missingObject", "missingSpaceBeforeDate",
        "missingSpaceBeforeEmail", "missingTag", "missingTagEntry", "missingTree", "missingType",
        "missingTypeEntry", "multipleAuthors", "treeNotSorted", "unknownType", "zeroPaddedDate",
        "gitmodulesMissing", "gitmodulesBlob", "gitmodulesLarge", "gitmodulesName", "gitmodulesSymlink",
        "gitmodulesUrl", "gitmodulesPath", "gitmodulesUpdate", "gitattributesMissing", "gitattributesLarge",
        "gitattributesLineLength", "gitattributesBlob"), "ERROR"),
    **dict.fromkeys(("emptyName", "fullPathname", "hasDot", "hasDotdot", "hasDotgit", "nullSha1",
                     "zeroPaddedFilemode", "nulInCommit", "largePathname"), "WARN"),
    **dict.fromkeys(("badFilemode", "gitmodulesParse", "gitignoreSymlink", "gitattributesSymlink", "mailmapSymlink",
                     "badTagName", "missingTaggerEntry"), "INFO"),
    "extraHeaderEntry": "IGNORE",
}


@dataclass
class Built:
    """What a case built: the ref to push, its new value, the objects to send (exactly these: a
    client's own `pack-objects --revs` refuses to walk some of them), and the object git fsck
    names."""

    ref: str
    tip: str
    objects: list[str]
    commit: str  # the commit the gate judges (a tag's target)


class Builder:
    """Writes objects byte for byte (`hash-object --literally`) into a work repository whose
    `base` commit the server already holds, and remembers what it wrote."""

    def __init__(self, repo: Path, base: str) -> None:
        self.repo = repo
        self.base = base
        self.written: list[str] = []
        self.base_tree = self.rev(f"{base}^{{tree}}")
        self.root_entries = self.entries(self.base_tree)

    def rev(self, spec: str) -> str:
        return git_bytes(self.repo, "rev-parse", spec).decode().strip()

    def obj(self, kind: str, data: bytes) -> str:
        oid = git_bytes(self.repo, "hash-object", "-t", kind, "-w", "--literally", "--stdin",
                        input=data).decode().strip()
        self.written.append(oid)
        return oid

    def blob(self, data: bytes) -> str:
        return self.obj("blob", data)

    def entries(self, tree: str) -> list[tuple[bytes, bytes, str]]:
        """(raw mode, name, id) of a stored tree, as stored."""
        data = git_bytes(self.repo, "cat-file", "tree", tree)
        out, pos, raw = [], 0, len(self.base) // 2
        while pos < len(data):
            sp = data.index(b" ", pos)
            nul = data.index(b"\0", sp)
            out.append((data[pos:sp], data[sp + 1:nul], data[nul + 1:nul + 1 + raw].hex()))
            pos = nul + 1 + raw
        return out

    def tree(self, entries: list[tuple[bytes, bytes, str]], order: bool = True) -> str:
        """A tree of exactly these entries: sorted as git sorts them, or as given."""
        if order:
            entries = sorted(entries, key=lambda e: e[1] + (b"/" if e[0].lstrip(b"0") == b"40000" else b""))
        return self.obj("tree", b"".join(m + b" " + n + b"\0" + bytes.fromhex(o) for m, n, o in entries))

    def root(self, label: str, extra: list[tuple[bytes, bytes, str]] = (), order: bool = True,  # type: ignore[assignment]
             drop: tuple[bytes, ...] = ()) -> str:
        """The base's root with `ci/deploy.yml` rewritten (the frozen write, unique per label), the
        `extra` entries added (replacing any of the same name) and `drop`ped names removed."""
        ci = self.tree([(b"100644", b"deploy.yml", self.blob(b"deploy: " + label.encode() + b"\n"))])
        names = {e[1] for e in extra} | set(drop) | {b"ci"}
        kept = [e for e in self.root_entries if e[1] not in names]
        return self.tree([*kept, (b"40000", b"ci", ci), *extra], order)

    def commit(self, tree: str, author: bytes = AGENT_IDENT, committer: bytes | None = HUMAN_IDENT,
               headers: bytes = b"", message: bytes = b"an agent's change\n") -> str:
        lines = [b"tree " + tree.encode(), b"parent " + self.base.encode(), b"author " + author]
        if committer is not None:
            lines.append(b"committer " + committer)
        return self.obj("commit", b"\n".join(lines) + b"\n" + headers + b"\n" + message)

    def agent_commit(self, label: str) -> str:
        """A plain agent commit writing the frozen file (what tag cases point at)."""
        return self.commit(self.root(label), committer=AGENT_IDENT)

    def tag(self, data: bytes) -> str:
        return self.obj("tag", data)

    def built(self, ref: str, tip: str, commit: str | None = None) -> Built:
        objects, self.written = self.written, []
        return Built(ref, tip, objects, commit or tip)


def _ident_case(value: bytes) -> Callable[[Builder, str], Built]:
    def build(b: Builder, label: str) -> Built:
        return b.built(f"refs/heads/fsck/{label}", b.commit(b.root(label), author=value))
    return build


def _header_case(raw: Callable[[Builder, str], bytes]) -> Callable[[Builder, str], Built]:
    """A commit written whole (`raw` gets the new tree's id)."""
    def build(b: Builder, label: str) -> Built:
        return b.built(f"refs/heads/fsck/{label}", b.obj("commit", raw(b, b.root(label))))
    return build


def _entry_case(mode: bytes, name: bytes, content: bytes | None = b"x\n", kind: str = "blob",
                send: bool = True) -> Callable[[Builder, str], Built]:
    """An extra root entry `name` (a blob, a symlink, a tree holding one file, or an id not sent)."""
    def build(b: Builder, label: str) -> Built:
        if kind == "tree":
            oid = b.tree([(b"100644", b"file", b.blob(content or b""))])
        elif kind == "null":
            oid = "0" * len(b.base)
        elif not send:  # an id no repository holds
            oid = git_bytes(b.repo, "hash-object", "--stdin", input=b"never written: " + (content or b"")
                            ).decode().strip()
        else:
            oid = b.blob(content or b"")
        root = b.root(label, [(mode, name, oid)])
        return b.built(f"refs/heads/fsck/{label}", b.commit(root, committer=AGENT_IDENT))
    return build


def _raw_root_case(entries: Callable[[Builder, str], list[tuple[bytes, bytes, str]]]
                   ) -> Callable[[Builder, str], Built]:
    """A root tree with exactly these entries, in this order (the frozen write included)."""
    def build(b: Builder, label: str) -> Built:
        root = b.tree(entries(b, label), order=False)
        return b.built(f"refs/heads/fsck/{label}", b.commit(root, committer=AGENT_IDENT))
    return build


def _base_entries(b: Builder, label: str) -> list[tuple[bytes, bytes, str]]:
    """The root `Builder.root` makes, as a sorted entry list."""
    return b.entries(b.root(label))


def _duplicate_ci(b: Builder, label: str) -> list[tuple[bytes, bytes, str]]:
    """The root with two `ci` entries: the base's first, the one with the frozen write second."""
    entries = _base_entries(b, label)
    at = next(i for i, e in enumerate(entries) if e[1] == b"ci")
    return [*entries[:at], next(e for e in b.root_entries if e[1] == b"ci"), *entries[at:]]


def _tag_case(body: Callable[[str], bytes]) -> Callable[[Builder, str], Built]:
    """A tag (its bytes from the target commit's id) pushed to refs/tags/fsck/<label>."""
    def build(b: Builder, label: str) -> Built:
        target = b.agent_commit(label)
        return b.built(f"refs/tags/fsck/{label}", b.tag(body(target)), commit=target)
    return build


TAGGER = b"tagger Hana Human <hana@example.com> 1790000000 +0000\n"


@dataclass(frozen=True)
class Case:
    msg_id: str
    default: str  # git receive-pack, no fsckObjects: accept | refuse
    fsck: str  # with receive.fsckObjects: accept | refuse
    gate: str  # "decide" (the frozen write is judged: GATE-FROZEN-PATH), a GATE- code, or "git" (never reached)
    why: str  # the reason for the gate's column (docs/security.md's last column)
    build: Callable[[Builder, str], Built] | None = None  # None: cannot be built or sent (why says)
    variant: str = ""  # a second case of one id
    #: What git 2.39's receive-pack names when receive.fsckObjects refuses (or warns about) the
    #: object: the message id itself, unless git's parser fails first (then its error line).
    says: str = ""

    @property
    def level(self) -> str:
        return LEVELS[self.msg_id]

    @property
    def label(self) -> str:
        return self.msg_id + (f"-{self.variant}" if self.variant else "")


def _commit_bytes(b: Builder, tree: str, *lines: bytes, end: bytes = b"\n\nm\n") -> bytes:
    return b"\n".join([b"tree " + tree.encode(), b"parent " + b.base.encode(), *lines]) + end


CASES: tuple[Case, ...] = (
    # --- fatal ------------------------------------------------------------------------------------
    Case("nulInHeader", "accept", "refuse", "GATE-GIT-MALFORMED",
         "git stops reading the header at the NUL, libgit2 reads past it",
         _header_case(lambda b, t: _commit_bytes(b, t, b"author " + AGENT_IDENT, b"committer " + HUMAN_IDENT,
                                                 b"x-note a\0b"))),
    Case("unterminatedHeader", "accept", "refuse", "decide",
         "git reads the last header line to the end of the object; libgit2 does not read the commit at all, "
         "which is no other reading",
         _header_case(lambda b, t: _commit_bytes(b, t, b"author " + AGENT_IDENT, b"committer " + HUMAN_IDENT,
                                                 end=b""))),
    # --- commits: idents ---------------------------------------------------------------------------
    Case("badDate", "accept", "refuse", "decide", "the date decides nothing; every reader reads the same email",
         _ident_case(b"Agent Smith <bot-7@agents.example.com> 17x0000000 +0000")),
    Case("badDateOverflow", "accept", "refuse", "decide",
         "as badDate (libgit2 does not read the commit at all, which is no other reading)",
         _ident_case(b"Agent Smith <bot-7@agents.example.com> 99999999999999999999 +0000")),
    Case("badEmail", "accept", "refuse", "GATE-GIT-MALFORMED",
         "a second '<': git reads the email from the first, libgit2, go-git and Gitea from the last",
         _ident_case(b"Agent Smith <hana@example.com<bot-7@agents.example.com> 1790000000 +0000")),
    Case("badName", "accept", "refuse", "decide",
         "a '>' before the '<' is part of the name for every reader; the email is read alike",
         _ident_case(b"Agent > Smith <bot-7@agents.example.com> 1790000000 +0000")),
    Case("badTimezone", "accept", "refuse", "decide", "the time zone decides nothing (real histories: +051800)",
         _ident_case(b"Agent Smith <bot-7@agents.example.com> 1790000000 +051800")),
    Case("badTimezone", "accept", "refuse", "decide", "as above (real histories: -700)",
         _ident_case(b"Agent Smith <bot-7@agents.example.com> 1790000000 -700"), variant="short"),
    Case("missingEmail", "accept", "refuse", "GATE-GIT-MALFORMED", "no email to decide on: git's %ae is empty",
         _ident_case(b"Agent Smith bot-7@agents.example.com 1790000000 +0000")),
    Case("missingNameBeforeEmail", "accept", "refuse", "decide", "every reader reads an empty name and the email",
         _ident_case(b"<bot-7@agents.example.com> 1790000000 +0000")),
    Case("missingSpaceBeforeDate", "accept", "refuse", "decide", "the date decides nothing",
         _ident_case(b"Agent Smith <bot-7@agents.example.com>1790000000 +0000")),
    Case("missingSpaceBeforeEmail", "accept", "refuse", "decide", "every reader reads the same name and email",
         _ident_case(b"Agent Smith<bot-7@agents.example.com> 1790000000 +0000")),
    Case("zeroPaddedDate", "accept", "refuse", "decide", "the date decides nothing",
         _ident_case(b"Agent Smith <bot-7@agents.example.com> 01790000000 +0000")),
    # --- commits: structure ------------------------------------------------------------------------
    Case("badParentSha1", "refuse", "refuse", "git",
         "git cannot read the commit (its connectivity check refuses it; the gate would: GATE-GIT-MALFORMED)",
         _header_case(lambda b, t: b"tree " + t.encode() + b"\nparent " + b"z" * len(b.base) + b"\nauthor "
                      + AGENT_IDENT + b"\ncommitter " + HUMAN_IDENT + b"\n\nm\n"),
         says="bad parents in commit"),
    Case("badTreeSha1", "refuse", "refuse", "git", "as badParentSha1",
         _header_case(lambda b, t: b"tree " + b"z" * len(b.base) + b"\nparent " + b.base.encode() + b"\nauthor "
                      + AGENT_IDENT + b"\ncommitter " + HUMAN_IDENT + b"\n\nm\n"),
         says="bad tree pointer in commit"),
    Case("missingTree", "refuse", "refuse", "git", "as badParentSha1",
         _header_case(lambda b, t: b"parent " + b.base.encode() + b"\nauthor " + AGENT_IDENT + b"\ncommitter "
                      + HUMAN_IDENT + b"\n\nm\n"),
         says="bogus commit object"),
    Case("missingAuthor", "accept", "refuse", "GATE-GIT-MALFORMED",
         "git's %ae is empty, libgit2 does not read the commit: no author to decide on",
         _header_case(lambda b, t: _commit_bytes(b, t, b"committer " + AGENT_IDENT))),
    Case("multipleAuthors", "accept", "refuse", "GATE-GIT-MALFORMED",
         "git's log shows the last author, libgit2 the first",
         _header_case(lambda b, t: _commit_bytes(b, t, b"author " + HUMAN_IDENT, b"author " + AGENT_IDENT,
                                                 b"committer " + HUMAN_IDENT))),
    Case("missingCommitter", "accept", "refuse", "GATE-GIT-MALFORMED",
         "git's %ce is empty, libgit2 does not read the commit",
         _header_case(lambda b, t: _commit_bytes(b, t, b"author " + AGENT_IDENT))),
    Case("nulInCommit", "accept", "refuse", "decide",
         "a NUL in the message: git's trailers and %B end there, and so do the gate's",
         _header_case(lambda b, t: _commit_bytes(b, t, b"author " + AGENT_IDENT, b"committer " + HUMAN_IDENT,
                                                 end=b"\n\nm\0hidden\n"))),
    # --- trees --------------------------------------------------------------------------------------
    Case("badTree", "refuse", "refuse", "git",
         "git cannot read the tree (connectivity check); the gate would: GATE-GIT-MALFORMED",
         lambda b, label: b.built(f"refs/heads/fsck/{label}",
                                  b.commit(b.obj("tree", b"100644 README\0short"), committer=AGENT_IDENT))),
    Case("duplicateEntries", "accept", "refuse", "GATE-GIT-MALFORMED",
         "git's lookups find the first of two entries, other readers the last: two `ci` entries, the base's "
         "first (git sees no frozen write) and the agent's second; a duplicate of a name no rule reads "
         "decides nothing and is left to git fsck (trees are searched for the rules' names, not parsed whole); "
         "under a `**/NAME` pattern every directory is read, and a file named as one before it (git's order) "
         "is refused: git's lookups find the file and lose what the directory holds",
         _raw_root_case(_duplicate_ci)),
    Case("treeNotSorted", "accept", "refuse", "decide",
         "git's path lookups stop at the first name past the one sought: `git show` misses entries `ls-tree` "
         "lists; the gate searches a tree for a rule's names wherever they stand, so it judges the write every "
         "reader could find (two of one such name are duplicateEntries); the order itself is git fsck's",
         _raw_root_case(lambda b, label: list(reversed(_base_entries(b, label))))),
    Case("emptyName", "refuse", "refuse", "git",
         "git's tree walk refuses an empty name (connectivity check); the gate would: GATE-GIT-MALFORMED",
         _raw_root_case(lambda b, label: [(b"100644", b"", b.blob(b"x\n")), *_base_entries(b, label)]),
         says="empty filename in tree entry"),
    Case("fullPathname", "accept", "refuse", "GATE-GIT-MALFORMED",
         "one entry named `ci/deploy.yml`: diff and ls-tree show the frozen path, a checkout refuses it",
         _entry_case(b"100644", b"ci/deploy.yml")),
    Case("hasDot", "accept", "refuse", "GATE-GIT-MALFORMED", "checkouts refuse it; paths through it are ambiguous",
         _entry_case(b"40000", b".", kind="tree")),
    Case("hasDotdot", "accept", "refuse", "GATE-GIT-MALFORMED", "as hasDot",
         _entry_case(b"40000", b"..", kind="tree")),
    Case("hasDotgit", "accept", "refuse", "decide",
         "read as a path like any other; checkouts refuse it, and no frozen path is under .git/",
         _entry_case(b"40000", b".git", kind="tree")),
    Case("nullSha1", "accept", "refuse", "decide", "a submodule pointing at the zero id: read alike everywhere",
         _entry_case(b"160000", b"nullsub", kind="null", send=False)),
    Case("zeroPaddedFilemode", "accept", "refuse", "decide",
         "`040000` is git's directory mode spelled with a leading zero (old histories hold it)",
         lambda b, label: b.built(f"refs/heads/fsck/{label}", b.commit(
             b.tree([(b"040000" if e[1] == b"src" else e[0], e[1], e[2]) for e in b.entries(b.root(label))]),
             committer=AGENT_IDENT))),
    Case("badFilemode", "accept", "accept", "decide",
         "canonicalised by git's canon_mode and read so; GATE-GIT-MODE at a frozen path (or anywhere, "
         "objects.noncanonical_modes = refuse)",
         lambda b, label: b.built(f"refs/heads/fsck/{label}", b.commit(
             b.tree([e for e in b.entries(b.root(label)) if e[1] != b"src"]
                    + [(b"40000", b"src", b.tree([(b"100664", b"app.py", b.blob(b"print('hi')\n"))]))]),
             committer=AGENT_IDENT))),
    # --- .gitmodules, .gitattributes, .gitignore, .mailmap (file contents: decided as paths) ------------
    Case("gitmodulesMissing", "refuse", "refuse", "git",
         "the blob is not sent: git's connectivity check refuses any tree naming a missing object",
         _entry_case(b"100644", b".gitmodules", b"[submodule \"gone\"]\n", send=False),
         says="object of unexpected type"),
    Case("gitmodulesBlob", "accept", "refuse", "decide", "a directory named .gitmodules: a path like any other",
         _entry_case(b"40000", b".gitmodules", kind="tree")),
    Case("gitmodulesLarge", "accept", "refuse", "decide",
         "needs a blob over core.bigFileThreshold (512 MiB); a file's size decides nothing"),
    Case("gitmodulesName", "accept", "refuse", "decide",
         "file contents decide nothing; freeze .gitmodules to keep agents out of it",
         _entry_case(b"100644", b".gitmodules",
                     b"[submodule \"../../x\"]\n\tpath = vendor/x\n\turl = https://example.com/x.git\n")),
    Case("gitmodulesPath", "accept", "refuse", "decide", "as gitmodulesName",
         _entry_case(b"100644", b".gitmodules", b"[submodule \"x\"]\n\tpath = -x\n\turl = https://example.com/x\n")),
    Case("gitmodulesSymlink", "accept", "refuse", "decide", "a symlink at .gitmodules: a path like any other",
         _entry_case(b"120000", b".gitmodules", b"elsewhere")),
    Case("gitmodulesUpdate", "accept", "refuse", "decide", "as gitmodulesName",
         _entry_case(b"100644", b".gitmodules",
                     b"[submodule \"x\"]\n\tpath = x\n\turl = https://example.com/x\n\tupdate = !sh\n")),
    Case("gitmodulesUrl", "accept", "refuse", "decide", "as gitmodulesName",
         _entry_case(b"100644", b".gitmodules", b"[submodule \"x\"]\n\tpath = x\n\turl = -u\n")),
    Case("gitmodulesParse", "accept", "accept", "decide", "as gitmodulesName",
         _entry_case(b"100644", b".gitmodules", b"[submodule\n")),
    Case("gitattributesMissing", "refuse", "refuse", "git", "as gitmodulesMissing",
         _entry_case(b"100644", b".gitattributes", b"* text\n", send=False),
         says="object of unexpected type"),
    Case("gitattributesBlob", "accept", "refuse", "decide", "as gitmodulesBlob",
         _entry_case(b"40000", b".gitattributes", kind="tree")),
    Case("gitattributesLarge", "accept", "refuse", "decide",
         "needs a .gitattributes over 100 MiB; a file's size decides nothing"),
    Case("gitattributesLineLength", "accept", "refuse", "decide", "as gitmodulesName",
         _entry_case(b"100644", b".gitattributes", b"*" + b"a" * 2100 + b" text\n")),
    Case("gitattributesSymlink", "accept", "accept", "decide", "as gitmodulesSymlink",
         _entry_case(b"120000", b".gitattributes", b"elsewhere")),
    Case("gitignoreSymlink", "accept", "accept", "decide", "as gitmodulesSymlink",
         _entry_case(b"120000", b".gitignore", b"elsewhere")),
    Case("mailmapSymlink", "accept", "accept", "decide", "as gitmodulesSymlink",
         _entry_case(b"120000", b".mailmap", b"elsewhere")),
    # --- tags ----------------------------------------------------------------------------------------
    Case("badObjectSha1", "refuse", "refuse", "git",
         "git cannot read the tag (connectivity check); the gate would: GATE-GIT-MALFORMED",
         _tag_case(lambda t: b"object " + b"z" * len(t) + b"\ntype commit\ntag x\n" + TAGGER + b"\nm\n"),
         says="invalid tag"),
    Case("missingObject", "refuse", "refuse", "git", "as badObjectSha1",
         _tag_case(lambda t: b"type commit\ntag x\n" + TAGGER + b"\nm\n"),
         says="invalid tag"),
    Case("missingTypeEntry", "refuse", "refuse", "git", "as badObjectSha1",
         _tag_case(lambda t: b"object " + t.encode() + b"\ntag x\n" + TAGGER + b"\nm\n"),
         says="invalid tag"),
    Case("missingType", "refuse", "refuse", "git",
         "not reachable on its own: an object ending after 'type' is unterminatedHeader first; git cannot "
         "read such a tag"),
    Case("badType", "refuse", "refuse", "git", "as badObjectSha1",
         _tag_case(lambda t: b"object " + t.encode() + b"\ntype kommit\ntag x\n" + TAGGER + b"\nm\n"),
         says="unknown tag type"),
    Case("missingTagEntry", "refuse", "refuse", "git", "git cannot read a tag without its 'tag' line",
         _tag_case(lambda t: b"object " + t.encode() + b"\ntype commit\n" + TAGGER + b"\nm\n"),
         says="invalid tag"),
    Case("missingTag", "refuse", "refuse", "git", "as missingType"),
    Case("badTagName", "accept", "accept", "decide", "the tag's own name decides nothing (the ref's name does)",
         _tag_case(lambda t: b"object " + t.encode() + b"\ntype commit\ntag a..b\n" + TAGGER + b"\nm\n")),
    Case("missingTaggerEntry", "accept", "accept", "decide", "old tags have no tagger; the tagger decides nothing",
         _tag_case(lambda t: b"object " + t.encode() + b"\ntype commit\ntag x\n\nm\n")),
    Case("extraHeaderEntry", "accept", "accept", "decide", "an extra header decides nothing",
         _tag_case(lambda t: b"object " + t.encode() + b"\ntype commit\ntag x\n" + TAGGER + b"x-extra y\n\nm\n")),
    Case("unknownType", "refuse", "refuse", "git",
         "a pack holds only the four object types: such an object cannot be sent"),
)


def build_all(repo: Path, base: str) -> dict[str, Built]:
    """Every buildable case, by label."""
    b = Builder(repo, base)
    return {c.label: c.build(b, c.label) for c in CASES if c.build is not None}

