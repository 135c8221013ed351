"""The one registry of stable rejection codes.

Every rejection the gate produces carries one of these codes. Codes are stable: once
released, a code keeps its meaning; new situations get new codes. `docs/codes.md` is
generated from this table and a test keeps the two identical.

This module is pure data and imports nothing heavy: the pre-receive hook loads it on
every push.
"""

from __future__ import annotations

from collections.abc import Mapping

from .valueclass import valueclass


@valueclass(frozen=True, slots=True)
class Code:
    code: str
    area: str
    reason: str
    hint: str
    exit: int  # the exit class: 1 rejects the input, 2 configuration, 3 internal
    actor: str = "pusher"  # who must act: a key of ACTORS
    retry: bool = False  # the same push, unchanged, may pass if tried again (a transient fault)
    command: str = ""  # the next command, with {placeholders} filled from the rejection where known

    def advice(self, values: Mapping[str, str] | None = None) -> dict[str, object]:
        """What a bot needs besides the code (the gate-json line, `gate explain CODE --json`):
        exit class, hint, who must act, whether a retry can help, and the next command when
        every placeholder of it is known."""
        out: dict[str, object] = {"exit": self.exit, "exit_class": EXIT_CLASSES[self.exit], "hint": self.hint,
                                  "actor": self.actor, "retry": self.retry}
        known = dict(values or {})
        needed = [part.split("}")[0] for part in self.command.split("{")[1:]]
        if self.command and all(name in known for name in needed):  # else no command rather than a wrong one
            out["next"] = self.command.format_map(known)
        return out


AREAS: dict[str, str] = {
    "RECEIPT": "Receipt documents: presence, size, syntax, fields",
    "SEAL": "Seals: envelopes, keys, signatures",
    "BIND": "Binding: receipt fields that must equal what the gate recomputed or looked up",
    "VERDICT": "Verdict of the review",
    "FROZEN": "Frozen files written by a restricted identity",
    "SIG": "Commit signatures, where the policy requires them",
    "APPROVAL": "Maintainer approvals of frozen-path writes, under refs/gate/approvals/",
    "REF": "Ref updates: names, deletions, force pushes, targets",
    "LEDGER": "The attempt ledger under refs/gate/attempts/",
    "REVIEW": "Review refs under refs/heads/review/runner/",
    "ATTEST": "Exporting what the gate accepted as attestations (gate attest export)",
    "CONFIG": "Server-side configuration: policy, keyring, installation",
    "CLIENT": "The client hooks' own files, committed in the repository (.gate/policy.toml, .gate/keyring.toml)",
    "LIMIT": "Limits on what one push may ask of the gate ([limits] in the policy)",
    "INPUT": "Hook input and command-line input",
    "GIT": "Reading the repository",
    "HOOK": "The hook process itself",
    "CLI": "The gate command itself",
    "AUDIT": "The audit log",
    "DOCTOR": "The installation check",
    "AGENT": "A coding agent's pre-tool hook (gate agents check, docs/agent-hooks.md)",
}


#: Exit classes (the README's contract): what a caller can do about the error.
REJECT, CONFIG, INTERNAL = 1, 2, 3
EXIT_CLASSES = {REJECT: "reject", CONFIG: "configuration", INTERNAL: "internal"}

#: The exit class of each area; a code of another class says so itself.
_AREA_EXIT = {"CONFIG": CONFIG, "CLIENT": CONFIG, "HOOK": INTERNAL, "AUDIT": INTERNAL}

#: Who must act on a rejection (the `actor` of the gate-json line and of `gate explain --json`).
ACTORS = {
    "pusher": "the pusher: you, or the agent whose push this was (change the push and push again)",
    "runner": "the trusted runner or orchestrator in CI (review again, record the attempt in the ledger)",
    "maintainer": "a maintainer: a human with rights over the frozen paths (make or approve the change)",
    "admin": "the server admin (fix the installation; the pusher cannot)",
    "developer": "the developer of this clone (commit the file the client hooks need; the change is not at fault)",
}
#: Who acts, by area; the codes below that differ say so in _ACTOR.
_AREA_ACTOR = {"RECEIPT": "runner", "SEAL": "runner", "BIND": "runner", "LEDGER": "runner", "REVIEW": "runner",
               "FROZEN": "maintainer", "APPROVAL": "maintainer", "CONFIG": "admin", "HOOK": "admin",
               "CLI": "admin", "AUDIT": "admin", "DOCTOR": "admin",
               "CLIENT": "developer"}
_ACTOR = {"GATE-SEAL-UNKNOWN-KEY": "admin", "GATE-LEDGER-NEWER": "admin", "GATE-SIG-UNKNOWN-KEY": "admin",
          "GATE-LEDGER-PUSHER": "pusher",
          "GATE-REVIEW-PUSHER": "pusher", "GATE-REF-DELETE": "maintainer", "GATE-REF-REPLACE": "maintainer",
          "GATE-INPUT-PUSHER": "admin", "GATE-GIT-UNREADABLE": "admin", "GATE-GIT-OBJECT-FORMAT": "admin",
          "GATE-GIT-REPOSITORY": "admin", "GATE-HOOK-DEADLINE": "pusher", "GATE-HOOK-CHAINED": "pusher",
          "GATE-REVIEW-VENDOR-UNKNOWN": "admin", "GATE-REVIEW-OPEN": "runner", "GATE-REVIEW-MODEL-UNPLACED": "admin",
          "GATE-AGENT-PAYLOAD": "developer", "GATE-AGENT-CONFIG": "developer", "GATE-AGENT-INTERNAL": "developer",
          "GATE-AGENT-INSTALL": "developer"}
#: Transient faults: the same push may pass when tried again.
_RETRY = {"GATE-HOOK-DEADLINE", "GATE-AUDIT-WRITE"}
_DOCTOR = "gate server doctor {git_dir}"
#: The next command, by code; {placeholders} are filled from the rejection ({ref}, {git_dir}).
_COMMAND = {"GATE-REF-STALE": "git fetch origin {ref}", "GATE-REF-FORCE": "git pull --rebase origin {ref}",
            "GATE-CONFIG-POLICY": _DOCTOR, "GATE-CONFIG-KEYRING": _DOCTOR, "GATE-CONFIG-INSTALL": _DOCTOR,
            "GATE-CONFIG-SIGNERS": _DOCTOR, "GATE-AUDIT-WRITE": _DOCTOR, "GATE-GIT-UNREADABLE": _DOCTOR,
            "GATE-HOOK-INTERNAL": _DOCTOR}


def _c(code: str, reason: str, hint: str, exit: int | None = None) -> Code:
    area = code.split("-")[1]
    return Code(code=code, area=area, reason=reason, hint=hint, exit=exit or _AREA_EXIT.get(area, REJECT),
                actor=_ACTOR.get(code, _AREA_ACTOR.get(area, "pusher")), retry=code in _RETRY,
                command=_COMMAND.get(code, ""))


_ALL: tuple[Code, ...] = (
    # --- receipts --------------------------------------------------------------
    _c("GATE-RECEIPT-MISSING", "no receipt was found for this attempt",
       "have the trusted runner review the change and push its receipt with the ref"),
    _c("GATE-RECEIPT-TOO-LARGE", "the receipt or envelope is larger than the 65536-byte cap",
       "receipts are small; keep reasons short"),
    _c("GATE-RECEIPT-MALFORMED", "the receipt payload is not a strict JSON object",
       "the runner must write UTF-8 JSON without duplicate keys, floats or NaN"),
    _c("GATE-RECEIPT-FIELD", "a receipt field is missing, unknown or has the wrong type or form",
       "the named field must follow the receipt schema in docs/receipts.md"),
    _c("GATE-RECEIPT-VERDICT", "the verdict is not exactly 'pass' or 'fail'",
       "verdicts are lower case: 'pass' or 'fail'"),
    _c("GATE-RECEIPT-REASONS", "the reasons are missing, empty or blank",
       "a passing review must give at least one non-blank reason"),
    _c("GATE-RECEIPT-REUSED", "this receipt was already pushed for this attempt",
       "a receipt is good for one transition; review the change again"),
    _c("GATE-RECEIPT-EXPIRED", "the receipt has expired",
       "review the change again to get a fresh receipt"),
    _c("GATE-RECEIPT-NOT-YET-VALID", "the receipt was issued in the future",
       "check the runner's clock"),
    _c("GATE-RECEIPT-LIFETIME", "the receipt's validity window is longer than 30 days",
       "issue receipts with a shorter lifetime"),
    # --- seals -----------------------------------------------------------------
    _c("GATE-SEAL-MALFORMED", "the envelope is not a valid sealed envelope",
       "an envelope has exactly payloadType, payload and one signature (keyid, sig)"),
    _c("GATE-SEAL-PAYLOAD-TYPE", "the envelope carries the wrong payload type",
       "receipts and attempt records have distinct payload types; do not mix them"),
    _c("GATE-SEAL-UNKNOWN-KEY", "the envelope is sealed with a key id the keyring does not hold",
       "add the runner's public key to the server keyring"),
    _c("GATE-SEAL-KEY-PURPOSE", "the sealing key is not allowed for this purpose",
       "receipt keys seal receipts, attempt keys attempt records, approval keys approvals; never another"),
    _c("GATE-SEAL-KEY-REVOKED", "the sealing key has been revoked",
       "seal with a current key"),
    _c("GATE-SEAL-KEY-EXPIRED", "the sealing key is outside its validity window",
       "rotate to a key that is valid now"),
    _c("GATE-SEAL-BAD-SIGNATURE", "the seal does not verify over the payload",
       "the payload was changed after sealing, or the wrong key was used"),
    # --- binding ---------------------------------------------------------------
    _c("GATE-BIND-ATTEMPT", "attempt_id differs from the attempt being checked",
       "a receipt belongs to exactly one attempt"),
    _c("GATE-BIND-MODEL", "model_id differs from the model on record for this attempt",
       "the receipt was scored by another model (failover?); score again with the current model"),
    _c("GATE-BIND-GENERATION", "workspace_generation differs from this attempt's generation",
       "the receipt comes from another workspace generation; score again"),
    _c("GATE-BIND-PROMPT", "prompt_sha256 differs from the prompt of this attempt",
       "the receipt was produced for another prompt"),
    _c("GATE-BIND-DIFF", "diff_sha256 differs from the digest of the change being checked",
       "the change was modified after it was scored; score again"),
    _c("GATE-BIND-DIFF-ALGORITHM", "diff_algorithm differs from the algorithm the gate uses here",
       "repository receipts use gate-tree-delta-v1, file receipts use sha256-bytes"),
    _c("GATE-BIND-REPOSITORY", "repository differs from this repository's id",
       "the receipt was issued for another repository"),
    _c("GATE-BIND-REF", "ref differs from the ref being updated",
       "the receipt was issued for another ref"),
    _c("GATE-BIND-OLD-COMMIT", "old_commit differs from the ref's current value",
       "the ref moved since the receipt was issued; a receipt is good for one transition"),
    _c("GATE-BIND-BASE-COMMIT", "base_commit is missing, not an ancestor of new_commit, or does not cover "
                                "everything the review brings onto its target branch on the server",
       "review the change from its merge base with the target branch as the server has it"),
    _c("GATE-BIND-NEW-COMMIT", "new_commit differs from the commit being pushed",
       "the receipt was issued for another commit"),
    _c("GATE-BIND-NEW-TREE", "new_tree differs from the tree of the commit being pushed",
       "the receipt was issued for another tree"),
    _c("GATE-BIND-OBJECT-FORMAT", "object_format differs from the repository's object format",
       "the receipt was issued for a repository of another hash"),
    _c("GATE-BIND-LEDGER", "ledger_record differs from the current model record of the attempt",
       "the attempt's model changed since the receipt was issued; score again"),
    # --- verdict ---------------------------------------------------------------
    _c("GATE-VERDICT-FAIL", "the review verdict is 'fail'",
       "address the reviewer's reasons and have the change reviewed again"),
    # --- frozen files ----------------------------------------------------------
    _c("GATE-FROZEN-PATH", "a restricted identity wrote a frozen path",
       "frozen paths are changed by humans only; ask a maintainer to make this change, or to approve it "
       "(gate approve, where the policy has [approvals])"),
    _c("GATE-FROZEN-REF", "a restricted pusher moved a ref so that a frozen path changed",
       "rewinding or force-pushing a ref may not change frozen paths; ask a maintainer"),
    # --- signatures ------------------------------------------------------------
    _c("GATE-SIG-MISSING", "a commit that must be signed (signatures.require) carries no signature",
       "sign commits with a key the server lists (git config commit.gpgSign true; gpg.format ssh or openpgp)"),
    _c("GATE-SIG-UNKNOWN-KEY", "the commit is signed by a key the server does not list: not in the allowed signers "
                               "for git at the commit's date, not in the OpenPGP keyring, or revoked or expired",
       "ask an admin to list the key (gate server install --allowed-signers FILE or --openpgp-keys FILE)"),
    _c("GATE-SIG-BAD", "the commit's signature does not verify (tampered, wrong namespace, or malformed)",
       "re-sign the commit: git commit --amend -S --no-edit"),
    _c("GATE-SIG-UNSUPPORTED", "the commit carries a signature the server cannot verify: X.509, an SSH "
                               "certificate or FIDO key, or OpenPGP where gpgv is not installed",
       "sign with a plain SSH key the server lists (git config gpg.format ssh, user.signingkey), or ask an admin "
       "to install gpgv"),
    # --- approvals -------------------------------------------------------------
    _c("GATE-APPROVAL-MALFORMED", "the approval record is not a valid approval (its commit, envelope or fields, "
                                  "its id, its repository, its size, or a lifetime over [approvals] max_hours)",
       "write approvals with gate approve, never by hand"),
    _c("GATE-APPROVAL-SIGNATURE", "the approval's SSH signature does not verify, or its key is not in the allowed "
                                  "signers for the gate-approval namespace",
       "sign with the SSH key the allowed-signers file lists for you (namespaces=\"git,gate-approval\" or none)"),
    _c("GATE-APPROVAL-APPROVER", "the approval (or its push) is by someone [approvals] approvers does not name, or "
                                 "its signing key does not sign for the approver it names",
       "approvals are written and pushed by maintainers the policy lists in [approvals] approvers"),
    _c("GATE-APPROVAL-EXPIRED", "the approval has expired",
       "ask a maintainer to approve the write again: gate approve (the rejection prints the command)"),
    _c("GATE-APPROVAL-USED", "the approval was used by an earlier push (each serves one ref update, once)",
       "ask a maintainer to approve this push: the rejection prints the gate approve command"),
    _c("GATE-APPROVAL-REF", "this approval ref update is not allowed: approvals are created once and never moved, "
                            "deleted by [trusted] pushers only; approval uses are written by the gate itself",
       "push a new approval with gate approve"),
    # --- refs ------------------------------------------------------------------
    _c("GATE-REF-DELETE", "this ref deletion is not allowed by policy",
       "ask a maintainer to delete the ref"),
    _c("GATE-REF-FORCE", "this non-fast-forward update is not allowed by policy",
       "rebase onto the current ref and push without --force"),
    _c("GATE-REF-NAME", "the ref name is not a valid, allowed ref name, or names a symbolic ref on the server that "
                        "cannot be judged as its target (a broken one, or one the push also updates otherwise)",
       "use a plain ref name under refs/ (see git check-ref-format); git refuses the same names, broken symbolic "
       "refs and inconsistent updates through them"),
    _c("GATE-REF-TARGET", "the ref would point at an object that is not allowed there",
       "branches and review refs must point at commits (git refuses a branch at another object too)"),
    _c("GATE-REF-STALE", "the push states an old value for a reserved ref that is not the ref's value on the server, "
                         "or deletes an existing ref stating the zero id as its old value",
       "fetch the ref from the server and build the update on its current value"),
    _c("GATE-REF-REPLACE", "replacement refs (refs/replace/*) are written by trusted pushers only",
       "git serves a replaced object in place of the original; ask a maintainer (policy refs.replace)"),
    _c("GATE-REF-RESERVED", "this ref namespace is reserved for the trusted side",
       "refs under refs/gate/ and refs/heads/review/runner/ are written by the runner only; "
       "refs/review/runner/ and refs/tags/review/runner/, which git reads first for a review's short name, by nobody"),
    # --- ledger ----------------------------------------------------------------
    _c("GATE-LEDGER-PUSHER", "the pusher may not write the attempt ledger",
       "only the trusted orchestrator and runner accounts write refs/gate/"),
    _c("GATE-LEDGER-DELETE", "attempt ledger refs cannot be deleted",
       "the ledger is append-only; gate ledger archive removes closed attempts once the archive holds them"),
    _c("GATE-LEDGER-REWRITE", "the ledger update is not a fast-forward of the existing chain (to a trusted command: "
                              "the remote's ledger does not continue the one its clone holds)",
       "the ledger is append-only; append a new record instead. A trusted command refusing the remote's: it was "
       "rewound, rewritten or deleted there (docs/forges.md): push the clone's copy back there, or open a new "
       "attempt (never close it from a clone without that copy)"),
    _c("GATE-LEDGER-RECORD", "a ledger commit is not a well-formed attempt record (or is over the size cap)",
       "ledger commits hold exactly one sealed record.json and one parent"),
    _c("GATE-LEDGER-NEWER", "a ledger record was written by a newer push-gate than this one: it has members (or a "
       "record version) this one does not know",
       "upgrade push-gate here first: servers before the trusted side's job images (docs/upgrading.md); until every "
       "server runs the new version, the trusted side leaves out its new options"),
    _c("GATE-LEDGER-SEQUENCE", "the ledger records are out of order or break the chain",
       "records go opened, model-selected, failover..., closed, each naming its predecessor"),
    _c("GATE-LEDGER-ATTEMPT", "the record's attempt id does not match its ref name",
       "refs/gate/attempts/<id> holds records of attempt <id> only"),
    _c("GATE-LEDGER-ARCHIVE", "an archive update is malformed, or does not hold what the attempts it folds away had",
       "run gate ledger archive; it archives closed attempts with their generation and every receipt"),
    _c("GATE-LEDGER-GENERATION-REUSED", "the workspace generation was already used by another attempt",
       "mint a fresh generation with gate bootstrap for every attempt"),
    _c("GATE-LEDGER-MISSING", "there is no ledger record for this attempt",
       "open the attempt with gate attempt open and push the ledger ref first"),
    _c("GATE-LEDGER-NO-MODEL", "no model has been selected for this attempt",
       "record the model with gate attempt select-model"),
    _c("GATE-LEDGER-CLOSED", "the attempt is closed and accepts no more receipts",
       "open a new attempt"),
    _c("GATE-LEDGER-UNREADABLE", "the ledger ref or its records cannot be read",
       "run gate attempt show on the server; the ledger may be corrupt"),
    # --- review refs -----------------------------------------------------------
    _c("GATE-REVIEW-PUSHER", "the pusher may not update review refs",
       "review refs are pushed by the trusted runner together with their receipt"),
    _c("GATE-REVIEW-SAME-PUSH", "the push updates an attempt's ledger and its review ref together",
       "push the ledger record first; a review is judged against the ledger the server already holds"),
    _c("GATE-REVIEW-RECEIPT-REF", "a receipt ref was pushed without its review ref, or malformed",
       "push refs/gate/receipts/<id> and refs/heads/review/runner/<id> in one atomic push"),
    _c("GATE-REVIEW-UNRECORDED", "the review ref is not where the last receipt on record put it",
       "a push landed the review ref without its receipt ref, or (a ledger repository apart, --ledger-remote) the "
       "review ref is not where the ledger's last receipt put it: land that review first (gate review push with its "
       "receipt), or close the attempt, archive it and review in a new one"),
    _c("GATE-REVIEW-OPEN", "on a forge, a review is judged once its attempt is closed, and this attempt's last "
                           "ledger record is not its close",
       "close the attempt after the review is pushed (gate attempt close --push REMOTE), then run the check again: "
       "a closed ledger is what a rewound one cannot show (docs/forges.md)"),
    _c("GATE-REVIEW-SAME-MODEL", "the reviewing model is the model that wrote the change ([review] independent)",
       "a model does not review its own change: fail the attempt over to another model (gate attempt failover "
       "--model M) and review again; gate attempt show prints the author and the reviewer"),
    _c("GATE-REVIEW-SAME-VENDOR", "the reviewing model is of the vendor that made the model that wrote the change "
                                  "([review] independent = \"vendor\")",
       "fail the attempt over to a model of another vendor (gate attempt failover --model M) and review again; "
       "gate attempt show prints the author and the reviewer"),
    _c("GATE-REVIEW-VENDOR-UNKNOWN", "no vendor is known for the author's or the reviewer's model, so independence "
                                     "cannot be shown ([review] independent = \"vendor\")",
       "name the model's vendor in the server's policy, [review.vendors] acme = [\"acme-coder-*\"], and reinstall "
       "it (gate server install GIT_DIR --policy FILE); or propose it, with a source, for the packaged table "
       "gatecore/data/vendors.toml; the author's vendor can also be recorded (gate attempt open --author-vendor)"),
    _c("GATE-REVIEW-MODEL-UNPLACED", "the author's or the reviewer's model id is placed by no model-id scheme, so "
                                     "it cannot be told apart from the other model ([review] independent)",
       "use the id as the provider lists it (gate attempt show says how each id reads); for a deployment "
       "name only its owner knows (Azure, Foundry), name the model it serves in the server's policy, "
       "[review.models] \"my-deployment\" = \"gpt-5\", and reinstall it (gate server install GIT_DIR --policy "
       "FILE); or propose the naming scheme, with a source, for the packaged table gatecore/data/models.toml"),
    _c("GATE-REVIEW-AUTHOR-UNKNOWN", "the ledger does not say which model wrote the attempt's change, so the "
                                     "reviewer's independence cannot be shown ([review] independent)",
       "open attempts with the model that writes their change (gate attempt open ... --author-model M "
       "[--author-vendor V]); an attempt opened without it cannot pass: close it and review in a new one"),
    _c("GATE-REVIEW-CHALLENGE", "the model's answer does not carry the challenge of the runner's request: no answer, "
                                "or one made for another request (stale or replayed)",
       "the runner seals only an answer made for its own request (gate review run): have the model's command pass "
       "the request on stdin to the model and print its answer, challenge included (docs/ci.md)"),
    _c("GATE-REVIEW-SERVED-MODEL", "the model's tool reports that another model than the one on record served the "
                                   "answer",
       "the vendor or the review tool fell back to another model: pin the model in the command, or record the "
       "failover (gate attempt failover --model M) and review again; nothing was sealed"),
    _c("GATE-REVIEW-MODEL-COMMAND", "the model's command failed: it exited non-zero, ran out of time, or printed "
                                    "more than an answer can be",
       "the detail gives the exit status and the end of its stderr; run it by hand with a request on stdin to see "
       "more, raise --model-timeout for a slow model, and run gate review run again: nothing was sealed"),
    _c("GATE-REVIEW-CHANGE-TOO-LARGE", "the change is too large to show the model whole in one review request (its "
                                       "text, shown by the gate from git's objects, is over 64 MiB); it is never "
                                       "cut",
       "review the change in smaller parts (several attempts, each a smaller range); nothing was sealed"),
    _c("GATE-REVIEW-MODEL-RUN", "the policy requires that the runner ran the model itself ([review] model_run = "
                                "\"runner\"), and the receipt says it did not",
       "review with gate review run --model-command CMD instead of gate review record --model-output FILE"),
    # --- attestations ----------------------------------------------------------
    _c("GATE-ATTEST-REFUSED", "records the gate would refuse today were not exported (each is listed with its own "
                              "code); the others were",
       "see each listed code (gate explain CODE); a record sealed by a key revoked since is never exported"),
    _c("GATE-ATTEST-CONFIG", "the export has nothing to verify the records with: no keyring, repository id or "
                             "policy for this repository",
       "run gate attest export on the server's repository, or pass --keyring, --repository-id and --policy",
       CONFIG),
    # --- configuration ---------------------------------------------------------
    _c("GATE-CONFIG-POLICY", "the server policy is missing or invalid",
       "not the pusher's fault: the server admin runs gate policy check FILE (each problem with its line and "
       "fix), then gate server install GIT_DIR --policy FILE"),
    _c("GATE-CONFIG-KEYRING", "the server keyring is missing or invalid",
       "not the pusher's fault: the server admin makes one (gate keys generate ... >> keyring.toml, docs/ci.md) or "
       "fixes it (gate keys check FILE), then runs gate server install GIT_DIR --keyring FILE"),
    _c("GATE-CLIENT-NO-POLICY", "the repository has no client policy: .gate/policy.toml is in no commit the hook "
       "reads and not in the work tree",
       "commit .gate/policy.toml (a copy of the server's policy; docs/client.md) before other changes, or give the "
       "hook --policy PATH"),
    _c("GATE-CLIENT-NO-KEYRING", "the repository has no client keyring: .gate/keyring.toml is in no commit the hook "
       "reads and not in the work tree",
       "commit .gate/keyring.toml (the public keys of the server's keyring; docs/client.md), or give the hook "
       "--keyring PATH"),
    _c("GATE-CONFIG-INSTALL", "the gate installation is incomplete or inconsistent",
       "run gate server doctor GIT_DIR"),
    _c("GATE-CONFIG-NAMESPACE", "the push goes to a git namespace (GIT_NAMESPACE, gitnamespaces(7)): the gate reads a "
                                "repository's refs, the ledger among them, outside any namespace, so it judges no "
                                "push made into one",
       "serve each project from a repository of its own rather than from namespaces of one (docs/servers.md)"),
    _c("GATE-CONFIG-LAYOUT", "the hook layout asked for would not run the gate here: a config-defined hook "
                             "(--config-hook) on a git older than 2.54, or on a platform that runs hooks its own way",
       "install the hook file (gate server install without --config-hook), or run git 2.54 or newer "
       "(docs/servers.md, config-defined hooks)"),
    _c("GATE-CONFIG-KEYFILE", "the signing key file is missing or invalid",
       "create one with gate keys generate"),
    _c("GATE-CONFIG-SIGNERS", "the policy reads commit signatures but neither an allowed-signers file nor an OpenPGP "
                              "keyring is installed, or one is invalid",
       "gate server install --allowed-signers FILE (ssh-keygen's format) or --openpgp-keys FILE (gpg --export)"),
    # --- input -----------------------------------------------------------------
    _c("GATE-INPUT-MALFORMED", "the hook input is not valid ref-update lines (one ref updated twice among them)",
       "pre-receive input is '<old> <new> <ref>' per line, each ref once; git refuses a push that updates one ref "
       "twice too"),
    # --- limits ------------------------------------------------------------------
    _c("GATE-LIMIT-REFS", "the push updates more refs than [limits] max_ref_updates allows",
       "push fewer refs at once: a mirror or a tag import in batches (git push origin 'refs/tags/v1*', then the "
       "rest); for a planned import the server admin may raise [limits] max_ref_updates"),
    _c("GATE-LIMIT-COMMITS", "the push brings more new commits than [limits] max_new_commits allows",
       "push the history in parts, oldest first (git push origin <older commit>:refs/heads/<branch>, then the "
       "tip); for a planned import the server admin may raise [limits] max_new_commits"),
    _c("GATE-INPUT-TOO-LARGE", "the hook input exceeds the size cap",
       "push fewer refs at once"),
    _c("GATE-INPUT-PUSHER", "the pusher's identity could not be read from the platform",
       "the hook must run under the platform that sets the pusher variable (see docs/servers.md)"),
    _c("GATE-INPUT-ARGUMENT", "a command-line value is invalid, or a file it names cannot be read as one",
       "see the command's --help; files are read only if they are regular files under the size cap"),
    _c("GATE-INPUT-PATH", "a path is not the plain file or directory it must be (a symlink, a file, a FIFO)",
       "the trusted side never follows a symlink out of the workspace and never overwrites; fix the path"),
    # --- git -------------------------------------------------------------------
    _c("GATE-GIT-UNREADABLE", "a pushed or referenced object is absent, or the repository cannot be read",
       "the hook cannot see the pushed objects; run gate server doctor", INTERNAL),
    _c("GATE-GIT-INCOMPLETE", "the pushed history is incomplete: a commit names a parent, or an update an old value, "
                              "that neither the push nor the repository holds, so the gate cannot read what it judges",
       "push from a complete clone (git fetch --unshallow). git refuses such a push too: a push from a shallow "
       "clone unless the server sets receive.shallowUpdate, a missing object by its connectivity check unless "
       "receive-pack was told to skip it"),
    _c("GATE-GIT-MALFORMED", "an object git, libgit2 or a forge could read two ways (two authors, a second '<' "
                             "in an ident, two tree entries of one name) or git itself cannot read",
       "the detail names the object and the reading that differs; odd dates and time zones are accepted "
       "(docs/security.md); rewrite the history without the object"),
    _c("GATE-GIT-MODE", "a tree entry has a mode that is not one of git's five canonical modes",
       "write files with git itself (modes 100644, 100755, 120000, 160000, 40000); see objects.noncanonical_modes"),
    _c("GATE-GIT-OBJECT-FORMAT", "ids of another width than the repository's object format, or a format git "
                                 "does not know",
       "every command reads SHA-1 and SHA-256 repositories, each with ids of its own width: check what fed the "
       "hook its input (docs/security.md, object formats)", CONFIG),
    _c("GATE-GIT-REPOSITORY", "the repository cannot be opened",
       "check GIT_DIR and the repository's permissions", CONFIG),
    # --- hook ------------------------------------------------------------------
    _c("GATE-HOOK-DEADLINE", "the gate ran past its deadline and rejected the push",
       "push fewer commits at once, or raise limits.deadline_seconds "
       "(default 4 s under GitHub Enterprise, 30 s elsewhere)"),
    _c("GATE-HOOK-INTERNAL", "the gate hit an internal error and rejected the push",
       "report the message to the server admin; the push was not accepted"),
    _c("GATE-HOOK-CHAINED", "a chained pre-receive hook rejected the push",
       "see the chained hook's own message above", REJECT),
    # --- the command line --------------------------------------------------------
    _c("GATE-CLI-INTERNAL", "the gate command hit an internal error",
       "report the message and the traceback above it; nothing was decided", INTERNAL),
    # --- audit -----------------------------------------------------------------
    _c("GATE-AUDIT-WRITE", "the audit log could not be written, so the push was rejected",
       "the admin must fix the audit log path (permissions, disk space)"),
    # --- agents' pre-tool hooks --------------------------------------------------
    _c("GATE-AGENT-HOOKS-OFF", "the tool call would switch a gate hook off: git --no-verify, core.hooksPath, "
                               "pre-commit uninstall, SKIP= naming a gate hook, or a write to an agent's hook "
                               "configuration or to the git directory's hooks and config",
       "leave the hooks as they are: commit and push with them, and if one refuses a change, read its code "
       "(gate explain CODE); a change to the hooks themselves is a maintainer's"),
    _c("GATE-AGENT-PAYLOAD", "the hook's input is not a tool call the check can read: not JSON, not the shape the "
                             "agent documents, an unknown agent, or a patch it cannot parse",
       "check that the hook runs gate agents check --agent NAME for the agent that runs it (gate agents doctor)"),
    _c("GATE-AGENT-NO-PATH", "a tool that writes a file named no path in its input",
       "call the tool with the file's path; the check refuses a write it cannot place"),
    _c("GATE-AGENT-CONFIG", "the check cannot read what it judges by: the policy committed in HEAD is missing or "
                            "invalid, or the repository cannot be read (the detail names the code underneath)",
       "commit a valid .gate/policy.toml (gate policy check FILE; docs/client.md), or pass --policy PATH in the "
       "hook's command", CONFIG),
    _c("GATE-AGENT-INSTALL", "an agent's hook configuration file exists and cannot be merged into (not JSON, "
                             "not an object, not push-gate's script): it was left as it is",
       "fix the file, or add the hook to it by hand as docs/agent-hooks.md shows; then run gate agents install "
       "again", CONFIG),
    _c("GATE-AGENT-INTERNAL", "the check hit an error of its own, or did not finish in time, and refused the call",
       "run the hook's command by hand with the payload on stdin to see the error; report it", INTERNAL),
    # --- doctor ----------------------------------------------------------------
    _c("GATE-DOCTOR-PROBE", "gate server doctor's probe push (never accepted)",
       "this rejection is expected during gate server doctor"),
)

CODES: dict[str, Code] = {c.code: c for c in _ALL}

if len(CODES) != len(_ALL):  # pragma: no cover - guards the table itself
    raise RuntimeError("duplicate code in gatecore.codes")


def exit_code(code: str) -> int:
    """The exit status a code ends a command with; an unregistered code is an internal error."""
    c = CODES.get(code)
    return INTERNAL if c is None else c.exit


def explain(code: str) -> str:
    c = CODES[code.strip().upper()]
    return (f"{c.code}\n  area:   {AREAS[c.area]}\n  reason: {c.reason}\n  hint:   {c.hint}\n"
            f"  exit:   {c.exit} ({EXIT_CLASSES[c.exit]})\n  acts:   {ACTORS[c.actor]}\n"
            f"  retry:  {'may help (a transient fault)' if c.retry else 'does not help unchanged'}\n"
            + (f"  next:   {c.command}\n" if c.command else ""))


def as_json(code: str) -> dict[str, object]:
    """`gate explain CODE --json`: the registry entry, as the gate-json line carries it."""
    c = CODES[code.strip().upper()]
    doc: dict[str, object] = {"code": c.code, "area": c.area, "reason": c.reason, **c.advice()}
    if c.command:
        doc["next"] = c.command  # the template: the rejection's own line has it filled in
    return doc


def markdown_table() -> str:
    """The text of docs/codes.md, generated from the registry."""
    lines = [
        "# Rejection codes",
        "",
        "Every rejection the gate prints carries one of these stable codes.",
        "`gate explain CODE` prints the same reason and hint. This file is generated from",
        "`gatecore/codes.py` (`gate explain --markdown > docs/codes.md`); a test keeps them equal.",
        "The exit column is the status a `gate` command or hook ends with for that code:",
        "1 the input is rejected, 2 configuration error, 3 internal error (any non-zero status rejects a push).",
        "The acts column says who must act; retry says whether the same push, unchanged, may pass when tried",
        "again (a transient fault).",
        "",
        "## For bots and agents",
        "",
        "A rejected push prints, after the lines for people, one `gate-json:` line per problem (git shows",
        "them prefixed `remote: `; under GitLab `GL-HOOK-ERR: `). Each is one JSON object, complete on",
        "its own, so an agent needs neither `gate` installed nor this page:",
        "",
        "    gate-json: {\"actor\":\"maintainer\",\"code\":\"GATE-FROZEN-PATH\",\"commit\":\"...\",\"detail\":\"...\",",
        "                \"exit\":1,\"exit_class\":\"reject\",\"hint\":\"...\",\"next\":\"gate approve ...\",",
        "                \"path\":\"ci/deploy.yml\",\"ref\":\"refs/heads/main\",\"retry\":false,\"rule\":\"...\"}",
        "",
        "* `code`: key on it, never on the text; `detail` is for people.",
        "* `actor`: who must act. " + "; ".join(f"`{k}`: {v}" for k, v in ACTORS.items()) + ".",
        "  An agent acts on `pusher` itself; on anything else it stops and reports to whoever the actor",
        "  names, with the `next` command when there is one.",
        "* `retry`: true only for transient faults; otherwise pushing the same thing again fails the",
        "  same way (do not loop).",
        "* `next`: the exact command that comes next, filled in (`gate approve ...` for a maintainer,",
        "  `gate server doctor GIT_DIR` for the admin), present only where the gate can fill it.",
        "* `setup`: beside a `gate approve` `next`, what the maintainer sets once per clone before it runs",
        "  as printed (who they are and their key, in git config): the server knows neither.",
        "* `exit`, `exit_class`: the registry's exit class of the code (below).",
        "",
        "`gate explain CODE --json` prints the same fields for a code (`next` as a template);",
        "`gate explain --list --json` prints every code. Configuration errors (`exit_class`",
        "`configuration`) are never the pusher's fault: the line says so, and the admin runs `next`.",
        "",
    ]
    for area, title in AREAS.items():
        rows = [c for c in _ALL if c.area == area]
        if not rows:
            continue
        lines += [f"## {area}: {title}", "", "| code | exit | acts | retry | reason | hint |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| `{c.code}` | {c.exit} | {c.actor} | {'yes' if c.retry else 'no'} | {c.reason} | {c.hint} |"
                  for c in rows]
        lines.append("")
    return "\n".join(lines)
