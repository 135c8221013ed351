"""What a shell command would write, read without a shell (`gatecore.toolcalls.shellwrites`): a table of
commands an agent's shell tool runs, each with the writes, the hook switch-offs and the parts the
reading says it cannot follow. The verdict column is what `gate agents check` answers under a policy
freezing `ci/**` for the agent: `deny` (a frozen write), `off` (GATE-AGENT-HOOKS-OFF) or `allow`."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatecore.toolcalls.shellwrites import patch_paths, read_command
from gatecore.toolcalls.toolcall import DELETE, MODE, MODIFY, WRITE, PathWrite

W, M, D, X = WRITE, MODIFY, DELETE, MODE

#: (command, {path: kind}, off, unread): the writes the reading finds (every one of them), whether it
#: switches a hook off, whether it says it could not read a part.
TABLE: list[tuple[str, dict[str, str], bool, bool]] = [
    ("echo x > ci/deploy.yml", {"ci/deploy.yml": W}, False, False),
    ("echo x >> ci/deploy.yml", {"ci/deploy.yml": W}, False, False),
    ("echo x >| ci/deploy.yml", {"ci/deploy.yml": W}, False, False),
    ("make &> ci/build.log", {"ci/build.log": W}, False, True),  # make: its own writes are unread
    ("ls 2>&1 | tee -a ci/log.txt", {"ci/log.txt": W}, False, False),
    ("ls > /dev/null 2>&1", {"/dev/null": W}, False, False),
    ("cat <<EOF > ci/a.yml\nkey: value\nci/never.yml\nEOF\necho done", {"ci/a.yml": W}, False, False),
    ("cat <<-'END' | tee ci/b.yml\n\tbody\n\tEND", {"ci/b.yml": W}, False, False),
    ("printf 'a\\n' | tee ci/x ci/y >/dev/null", {"ci/x": W, "ci/y": W, "/dev/null": W}, False, False),
    ("sed -i s/a/b/ ci/x.yml", {"ci/x.yml": M}, False, False),
    ("sed -i.bak -e 's/a/b/' ci/x.yml src/y.py", {"ci/x.yml": M, "src/y.py": M}, False, False),
    ("sed -i '' 's/a/b/' ci/x.yml", {"ci/x.yml": M}, False, False),
    ("sed 's/a/b/' ci/x.yml", {}, False, False),  # not in place: prints
    ("sed --in-place=.orig -f script.sed ci/x.yml", {"ci/x.yml": M}, False, False),
    ("perl -pi -e 's/a/b/' ci/x.yml", {"ci/x.yml": M}, False, False),
    ("cp src/a.yml ci/deploy.yml", {"ci/deploy.yml": W, "ci/deploy.yml/a.yml": W}, False, False),
    ("cp -r templates/ci .", {".": W, "ci": W}, False, False),
    ("cp -t ci a b", {"ci/a": W, "ci/b": W}, False, False),
    ("mv ci/deploy.yml old/", {"old/deploy.yml": W, "ci/deploy.yml": D}, False, False),
    ("rm ci/deploy.yml", {"ci/deploy.yml": D}, False, False),
    ("rm -rf ci", {"ci": D}, False, False),
    # (a symbolic link's target, from the link's directory, is reached through it)
    ("ln -sf ../secrets ci/link", {"ci/link": W, "ci/link/secrets": W, "secrets": W}, False, False),
    ("ln ci/deploy.yml hard", {"hard": W, "hard/deploy.yml": W, "ci/deploy.yml": M}, False, False),
    ("install -m 755 build/tool ci/tool", {"ci/tool": W, "ci/tool/tool": W}, False, False),
    ("install -d ci/new", {}, False, False),
    ("truncate -s 0 ci/deploy.yml", {"ci/deploy.yml": M}, False, False),
    ("touch ci/new.yml", {"ci/new.yml": W}, False, False),
    ("chmod +x ci/run.sh", {"ci/run.sh": X}, False, False),
    ("chmod -R 700 ci", {"ci": X}, False, False),
    ("dd if=/dev/zero of=ci/blob bs=1 count=1", {"ci/blob": W}, False, False),
    ("curl -fsSL -o ci/tool https://example.com/tool", {"ci/tool": W}, False, False),
    ("wget -O ci/tool https://example.com/tool", {"ci/tool": W}, False, False),
    ("cd ci && echo x > deploy.yml", {"ci/deploy.yml": W}, False, False),
    # (after `;` a `cd` may have failed: each directory the command may then be in)
    ("cd src; cd ../ci; rm deploy.yml", {"ci/deploy.yml": D, "../ci/deploy.yml": D, "src/deploy.yml": D,
                                         "deploy.yml": D}, False, False),
    ("cd src && cd ../ci && rm deploy.yml", {"ci/deploy.yml": D}, False, False),
    ("sudo -u root tee ci/x.yml", {"ci/x.yml": W}, False, False),
    ("env FOO=1 nohup timeout 5 tee ci/x.yml", {"ci/x.yml": W}, False, False),
    ("bash -c 'echo x > ci/x.yml'", {"ci/x.yml": W}, False, False),
    ("sh -c \"cd ci && rm -f deploy.yml\"", {"ci/deploy.yml": D}, False, False),
    ("git checkout main -- ci/deploy.yml", {"ci/deploy.yml": M}, False, False),
    ("git checkout feature", {}, False, False),
    ("git restore --source HEAD~1 ci/deploy.yml", {"ci/deploy.yml": M}, False, False),
    ("git rm -r ci", {"ci": D}, False, False),
    ("git mv ci/a.yml ci/b.yml", {"ci/b.yml": W, "ci/b.yml/a.yml": W, "ci/a.yml": D}, False, False),
    ("git -C ci rm deploy.yml", {"ci/deploy.yml": D}, False, False),
    ("git apply fix.diff", {}, False, False),  # the patch file is read by the caller (`patches`)
    ("git apply", {}, False, True),
    ("patch -p1 -i fix.diff", {}, False, False),
    ("patch ci/deploy.yml fix.diff", {"ci/deploy.yml": M}, False, False),
    ("git commit -am 'wip' --no-verify", {}, True, False),
    ("git commit -nm wip", {}, True, False),
    ("git commit -m '-n'", {}, False, False),
    ("git push --no-verify origin HEAD", {}, True, False),
    ("git push -n origin HEAD", {}, False, False),  # -n is --dry-run for push
    ("git merge --no-verify topic", {}, True, False),
    ("git -c core.hooksPath=/dev/null commit -m x", {}, True, False),
    ("git config core.hooksPath .nohooks", {}, True, False),
    ("git config --unset core.hooksPath", {}, False, False),
    ("pre-commit uninstall", {}, True, False),
    ("SKIP=gate-frozen-files git commit -m x", {}, True, False),
    ("SKIP=flake8 git commit -m x", {}, False, False),
    ("echo $(date) > $OUT", {}, False, True),
    ("python -c 'open(\"ci/x\", \"w\")'", {}, False, True),
    ("find . -name '*.yml' -delete", {}, False, True),
    ("tar -xf ci.tar", {}, False, True),
    ("echo 'unbalanced > ci/x", {}, False, True),
    ("ls ci # > ci/not-a-write", {}, False, False),
    ("cat ci/deploy.yml", {}, False, False),
    ("grep -r token ci/", {}, False, False),
]


def _writes(command: str) -> dict[str, str]:
    return {w.path: w.kind for w in read_command(command).writes}


def test_the_table_holds_at_least_forty_commands() -> None:
    assert len(TABLE) >= 40


@pytest.mark.parametrize(("command", "writes", "off", "unread"), TABLE, ids=[t[0][:40] for t in TABLE])
def test_each_command_reads_as_the_table_says(command: str, writes: dict[str, str], off: bool, unread: bool) -> None:
    got = read_command(command)
    assert _writes(command) == writes, got
    assert bool(got.off) == off, got
    assert bool(got.unread) == unread, got


def test_a_recursive_delete_or_copy_reaches_below_its_directory() -> None:
    assert {w.path: w.tree for w in read_command("rm -rf ci").writes} == {"ci": True}
    assert {w.path: w.tree for w in read_command("rm ci/x").writes} == {"ci/x": False}
    assert all(w.tree for w in read_command("cp -r a ci").writes)


def test_patch_files_are_named_for_the_caller_to_read() -> None:
    assert read_command("git apply a.diff b.diff").patches == ("a.diff", "b.diff")
    assert read_command("patch -p1 < fix.diff").patches == ("fix.diff",)
    assert read_command("cd sub && git apply ../x.diff").patches == ("x.diff",)
    assert read_command("git apply --check a.diff").patches == ()


def test_a_diff_names_every_path_it_writes() -> None:
    diff = ("diff --git a/ci/deploy.yml b/ci/deploy.yml\n--- a/ci/deploy.yml\n+++ b/ci/deploy.yml\n@@ -1 +1 @@\n"
            "-a\n+b\ndiff --git a/old.txt b/ci/new.txt\nrename from old.txt\nrename to ci/new.txt\n"
            "--- /dev/null\n+++ b/src/added.py\n")
    paths = {w.path for w in patch_paths(diff)}
    assert {"ci/deploy.yml", "old.txt", "ci/new.txt", "src/added.py"} <= paths
    assert PathWrite("old.txt", DELETE) in patch_paths(diff)


@pytest.mark.parametrize("value", ["gate-frozen-files-push", "gate-review-receipt", "flake8, gate-frozen-files-msg",
                                   " gate-frozen-files"])
def test_skip_naming_any_gate_hook_as_pre_commit_reads_it_switches_it_off(value: str) -> None:
    """pre-commit's `SKIP` holds hook ids (.pre-commit-hooks.yaml's, not the console scripts' names),
    split at commas and stripped: each of the four hooks, named as pre-commit takes it, is a switch-off."""
    import yaml

    from gatecore.toolcalls.shellwrites import GATE_HOOK_IDS

    manifest = Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml"
    assert set(GATE_HOOK_IDS) == {hook["id"] for hook in yaml.safe_load(manifest.read_text())}
    assert read_command(f"SKIP='{value}' git push origin HEAD").off
