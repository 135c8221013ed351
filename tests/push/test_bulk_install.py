"""Bulk operations that lose nothing: `gate server install --all` and `upgrade --all` over a
hosting root. A repository's own policy or keyring stays unless `--replace-policy` (the line
says what differs), one the admin uninstalled stays ungated unless named, `--dry-run` writes
nothing and says what each repository would get, every run ends with the counts and exits 1
when any repository failed; a repository whose directory name is no valid id is refused with
the `--repository-id` to give."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import cli
from support.gitutil import AGENT, WorkRepo, git
from support.server import POLICY
from support.verdicts import refused

from gatecore import __version__

#: A CI repository's own policy: the same freeze, and the runner trusted to push review refs.
OWN_POLICY = POLICY.replace('[trusted]\npushers = ["runner-*"]\n', '[trusted]\npushers = ["ci-runner"]\n')
#: What the admin hands every repository: no [trusted] table at all.
GIVEN = POLICY.replace('[trusted]\npushers = ["runner-*"]\n', "")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def host(tmp_path: Path) -> dict[str, Path]:
    """A hosting root: `fresh` never gated, `ci` gated with its own policy, `gone` gated then
    uninstalled, `My Project.git` whose name is no valid repository id."""
    root = tmp_path / "srv"
    root.mkdir()
    repos = {name: root / f"{name}.git" for name in ("fresh", "ci", "gone", "My Project")}
    for path in repos.values():
        git(root, "init", "-q", "--bare", "-b", "main", str(path))
    own = tmp_path / "own.toml"
    own.write_text(OWN_POLICY)
    assert cli("server", "install", str(repos["ci"]), "--policy", str(own)).returncode == 0
    assert cli("server", "install", str(repos["gone"]), "--policy", str(own)).returncode == 0
    assert cli("server", "uninstall", str(repos["gone"])).returncode == 0
    given = tmp_path / "policy.toml"
    given.write_text(GIVEN)
    return {**repos, "root": root, "given": given}


def test_a_dry_run_says_what_each_repository_would_get_and_writes_nothing(host: dict[str, Path]) -> None:
    before = _files(host["root"])
    out = cli("server", "install", "--all", str(host["root"]), "--policy", str(host["given"]), "--dry-run")
    assert out.returncode == 1, out.stdout + out.stderr  # one repository would fail: said, and the exit says it
    assert _files(host["root"]) == before
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"FAIL {host['My Project']}: GATE-CONFIG-INSTALL: the repository's directory name "
                               "'My Project' is not a valid repository id"), lines[0]
    assert lines[1] == (f"kept {host['ci']}: would install push-gate {__version__} (git, repository id ci); kept its "
                        f"own policy (differs from {host['given']}: trusted (only in its own))")
    assert lines[2] == f"ok   {host['fresh']}: would install push-gate {__version__} (git, repository id fresh)"
    assert lines[3].startswith(f"---- {host['gone']}: uninstalled: left ungated; name it to install it again")
    assert lines[4] == (f"install (dry run) over {host['root']}: 1 ok, 1 kept their own policy or keyring, 1 failed, "
                        "1 uninstalled")
    single = cli("server", "install", str(host["fresh"]), "--policy", str(host["given"]), "--dry-run")
    assert single.returncode == 0
    assert f"would install policy {host['fresh'] / 'gate' / 'policy.toml'}" in single.stdout
    assert f"would write the git pre-receive hook {host['fresh'] / 'hooks' / 'pre-receive'}" in single.stdout
    assert _files(host["root"]) == before


def test_install_all_keeps_a_repositorys_own_policy_and_leaves_the_uninstalled_one_ungated(
        host: dict[str, Path], tmp_path: Path) -> None:
    own = (host["ci"] / "gate" / "policy.toml").read_bytes()
    out = cli("server", "install", "--all", str(host["root"]), "--policy", str(host["given"]))
    assert out.returncode == 1, out.stdout + out.stderr  # My Project.git failed: counted, exit 1
    assert out.stdout.splitlines()[-1] == (f"install over {host['root']}: 1 ok, 1 kept their own policy or keyring, "
                                           "1 failed, 1 uninstalled")
    assert f"kept {host['ci']}: installed push-gate {__version__}" in out.stdout
    assert (host["ci"] / "gate" / "policy.toml").read_bytes() == own  # [trusted] pushers survived
    assert (host["fresh"] / "gate" / "policy.toml").read_text() == GIVEN
    assert not (host["gone"] / "hooks" / "pre-receive").exists() and not (host["gone"] / "gate" / "config.json").exists()
    assert not (host["My Project"] / "gate").exists()
    # the uninstalled repository takes any push (it is the admin's choice), the gated ones judge them
    work = WorkRepo(tmp_path / "w")
    work.write("ci/deploy.yml", "agent\n")
    work.commit("agent", identity=AGENT)
    assert work.git("push", f"file://{host['gone']}", "main", check=False).returncode == 0
    assert refused(work.git("push", f"file://{host['ci']}", "main", check=False), "GATE-FROZEN-PATH")
    # named, it is gated again (with the policy it kept)
    out = cli("server", "install", str(host["gone"]))
    assert out.returncode == 0, out.stderr
    work.write("ci/deploy.yml", "agent again\n")
    work.commit("agent", identity=AGENT)
    assert refused(work.git("push", f"file://{host['gone']}", "main", check=False), "GATE-FROZEN-PATH")
    # --replace-policy: the given policy everywhere
    out = cli("server", "install", "--all", str(host["root"]), "--policy", str(host["given"]), "--replace-policy")
    assert f"ok   {host['ci']}: installed push-gate" in out.stdout
    assert (host["ci"] / "gate" / "policy.toml").read_text() == GIVEN
    assert cli("server", "install", str(host["ci"]), "--replace-policy").returncode == 1  # --all only


def test_a_repositorys_own_keyring_stays_and_the_line_names_the_keys(host: dict[str, Path], tmp_path: Path) -> None:
    from gatecore.configuration.configschema import generate_key

    def ring(name: str, *ids: str) -> Path:
        path = tmp_path / name
        path.write_text("\n".join(generate_key("ed25519", i, "receipt").keyring_entry for i in ids))
        return path

    mine = ring("mine.toml", "runner-1")
    assert cli("server", "install", str(host["ci"]), "--keyring", str(mine)).returncode == 0
    given = ring("given.toml", "runner-2")
    out = cli("server", "install", "--all", str(host["root"]), "--policy", str(host["given"]), "--keyring",
              str(given))
    line = next(ln for ln in out.stdout.splitlines() if str(host["ci"]) in ln)
    assert line.startswith(f"kept {host['ci']}:") and "kept its own keyring (differs from" in line, line
    assert "key.runner-1 (only in its own), key.runner-2 (only in the given)" in line, line
    assert (host["ci"] / "gate" / "keyring.toml").read_text() == mine.read_text()
    assert (host["fresh"] / "gate" / "keyring.toml").read_text() == given.read_text()


def test_upgrade_all_dry_run_names_each_version_and_rewrites_nothing(host: dict[str, Path]) -> None:
    hook = host["ci"] / "hooks" / "pre-receive"
    hook.write_text(hook.read_text().replace(f"(push-gate {__version__})", "(push-gate 0.0.9)"))
    before = _files(host["root"])
    out = cli("server", "upgrade", "--all", str(host["root"]), "--dry-run")
    assert out.returncode == 0, out.stdout + out.stderr
    assert _files(host["root"]) == before
    lines = out.stdout.splitlines()
    assert f"ok   {host['ci']}: would upgrade from push-gate 0.0.9 to {__version__}" in lines
    assert lines[-1] == f"upgrade (dry run) over {host['root']}: 1 ok, 0 failed, 3 not gated"
    out = cli("server", "upgrade", "--all", str(host["root"]))
    assert f"ok   {host['ci']}: upgraded from push-gate 0.0.9 to {__version__}" in out.stdout
    assert out.stdout.splitlines()[-1] == f"upgrade over {host['root']}: 1 ok, 0 failed, 3 not gated"


def test_a_directory_name_that_is_no_valid_id_is_refused_with_the_option_to_give(host: dict[str, Path],
                                                                                   tmp_path: Path) -> None:
    """`My Project.git` exists in the wild: install derived the id from the name and stopped
    without saying what to do; it now names --repository-id with a valid id, and nothing is written."""
    repo = host["My Project"]
    out = cli("server", "install", str(repo), "--policy", str(host["given"]))
    assert out.returncode == 2, out.stdout
    assert "'My Project' is not a valid repository id" in out.stderr
    assert "--repository-id My-Project" in out.stderr
    assert not (repo / "gate").exists() and not (repo / "hooks" / "pre-receive").exists()
    out = cli("server", "install", str(repo), "--policy", str(host["given"]), "--repository-id", "My-Project")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == f"installed push-gate {__version__} (git, repository id My-Project)"
    work = WorkRepo(tmp_path / "w")
    work.write("ci/deploy.yml", "agent\n")
    work.commit("agent", identity=AGENT)
    assert refused(work.git("push", f"file://{repo}", "main", check=False), "GATE-FROZEN-PATH")
