"""Interrupts and kills leave nothing behind: `apply`, `check` and `diff` stopped by SIGINT,
SIGTERM or SIGKILL at several moments, through the real CLI in a subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from rewrite_e2e import git, state
from repo_env import pythonpath
from safety_helpers import BRANCH, env_for, ours, pipe_holders, spawn, tiny_repo

from autotune_rewrite import interrupts

MOMENTS = (0.2, 0.7)  # fractions of an uninterrupted cold run: start-up and compiles, then git work
KILL_MOMENTS = (0.15, 0.45, 0.75, 0.3, 0.6, 0.9)


def _full_run_seconds(tmp_path) -> float:
    """How long one cold `apply` takes here (the kill moments are fractions of it)."""
    root = tiny_repo(tmp_path, "timing")
    (tmp_path / "tmp-timing").mkdir()
    env = env_for(tmp_path / "tmp-timing", tmp_path / "cache-timing")
    start = time.monotonic()
    proc = spawn("apply", "--variant", "v1", ".", cwd=root, env=env)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return time.monotonic() - start


def _user_view(before: dict, after: dict) -> tuple[dict, dict]:
    """Everything but the refs, which an interrupt after the branch transaction may have added."""
    return {k: v for k, v in before.items() if k != "refs"}, {k: v for k, v in after.items() if k != "refs"}


def _refs_unchanged_or_complete(root, before_refs: str) -> None:
    now = git(root, "for-each-ref", "--format=%(refname) %(objectname)")
    if now == before_refs:
        return
    sha = git(root, "rev-parse", BRANCH).strip()  # all or nothing: the one branch, complete
    assert sorted(now.splitlines()) == sorted(before_refs.splitlines() + [f"refs/heads/{BRANCH} {sha}"])
    assert git(root, "rev-parse", f"{BRANCH}~1").strip() == git(root, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("signum, code, line", [
    (signal.SIGINT, 130, "interrupted; cleaned up"),
    (signal.SIGTERM, 143, "stopped by SIGTERM; cleaned up"),
])
def test_signalled_apply_leaves_checkout_worktrees_refs_and_tmp_as_they_were(tmp_path, signum, code, line):
    full = _full_run_seconds(tmp_path)
    for i, fraction in enumerate(MOMENTS):
        root = tiny_repo(tmp_path, f"repo{i}")
        tmpdir = tmp_path / f"tmp{i}"
        tmpdir.mkdir()
        before = state(root)
        proc = spawn("apply", "--variant", "v1", "-j", "2", ".", cwd=root,
                     env=env_for(tmpdir, tmp_path / f"cache{i}"))  # cold: the pool is busy when it lands
        time.sleep(full * fraction)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=120)
        after = state(root)
        assert _user_view(before, after)[0] == _user_view(before, after)[1], (fraction, err)
        _refs_unchanged_or_complete(root, before["refs"])
        assert ours(tmpdir) == [], (fraction, err)
        assert "Traceback" not in err, (fraction, err)
        if proc.returncode == 0:  # the run finished before the signal: a complete result
            assert BRANCH in out
            continue
        assert proc.returncode == code, (fraction, proc.returncode, err)
        assert err.strip().splitlines()[-1] == line, err
        assert "Aborted" not in err


def test_sigkilled_apply_is_cleaned_up_by_the_next_run_and_other_worktrees_stay(tmp_path):
    full = _full_run_seconds(tmp_path)
    root = tiny_repo(tmp_path)
    # The user's own worktree (and a folder of another tool in TMPDIR) must survive every prune.
    git(root, "worktree", "add", "-q", "--detach", str(tmp_path / "users-own-worktree"), "HEAD")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    (tmpdir / "someone-elses-folder").mkdir()
    before = state(root)
    killed_with_leftovers = 0
    # Where a kill lands depends on the machine's load; go on to later moments until one has
    # left a worktree or temp folder behind (the case the next run must clean), at least two kills.
    for i, fraction in enumerate(KILL_MOMENTS):
        if killed_with_leftovers and i >= 2:
            break
        proc = spawn("apply", "--variant", "v1", "--force", "-j", "2", ".", cwd=root,
                     env=env_for(tmpdir, tmp_path / f"cache{i}"))
        time.sleep(full * fraction)
        proc.kill()
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # something outlived the kill with our pipes: name it
            pytest.fail(f"killed apply's pipes still held 60 s later by {pipe_holders(proc)}")
        # Our pool's workers die with the pipe to their parent; give them a moment.
        time.sleep(0.5)
        killed_with_leftovers += bool(ours(tmpdir))
        # The next run (a normal one) prunes what the killed one left, and nothing else.
        env = env_for(tmpdir, tmp_path / "cache-next")
        nxt = subprocess.run([*spawn_args("apply", "--variant", "v1", "--force", ".")], cwd=root, env=env,
                             capture_output=True, text=True, timeout=300)
        assert nxt.returncode == 0, nxt.stderr
        after = state(root)
        assert _user_view(before, after)[0] == _user_view(before, after)[1], (fraction, nxt.stderr)
        assert ours(tmpdir) == []
        assert (tmpdir / "someone-elses-folder").is_dir()
        assert (tmp_path / "users-own-worktree" / "tiny" / "add.py").is_file()
    assert killed_with_leftovers, "no kill landed while apply had a worktree or temp folder"


def spawn_args(*args) -> list[str]:
    return [sys.executable, "-m", "autotune_rewrite", *args]


def test_stale_folders_are_swept_only_when_their_owner_is_dead(tmp_path):
    root = tiny_repo(tmp_path)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmpdir / f"autotune-rewrite-recheck-{dead.pid}-abc").mkdir()  # SIGKILLed run: owner gone
    (tmpdir / f"autotune-rewrite-recheck-{os.getpid()}-abc").mkdir()  # a live run (this test)
    (tmpdir / "autotune-rewrite-notes").mkdir()  # not one of ours: no pid in the name
    proc = subprocess.run(spawn_args("check", "."), cwd=root, env=env_for(tmpdir, tmp_path / "cache"),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert ours(tmpdir) == sorted([f"autotune-rewrite-recheck-{os.getpid()}-abc", "autotune-rewrite-notes"])


@pytest.mark.parametrize("command, signum, code", [
    (("check", "-j", "2", "."), signal.SIGINT, 130),
    (("diff", "--variant", "v1", "-j", "2", "."), signal.SIGTERM, 143),
])
def test_check_and_diff_stop_cleanly_with_pool_workers(tmp_path, command, signum, code):
    root = tiny_repo(tmp_path)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    before = state(root)
    proc = spawn(*command, cwd=root, env=env_for(tmpdir, tmp_path / "cache"))
    # Wait until the compile pool's workers exist, then signal the parent alone.
    deadline = time.monotonic() + 60
    while not (workers := _children(proc.pid)):
        assert proc.poll() is None and time.monotonic() < deadline, "never started a compile pool"
        time.sleep(0.02)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].endswith("cleaned up")
    assert ours(tmpdir) == []
    assert state(root) == before
    for pid in workers:  # no worker outlives its parent
        assert not _alive(pid), pid


def _children(pid: int) -> list[int]:
    """Forked pool workers (same command line as the parent; git subprocesses are not)."""
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    found = []
    for child in map(int, out.split()):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as fh:
                if b"autotune_rewrite" in fh.read():
                    found.append(child)
        except FileNotFoundError:
            pass
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_signal_inside_a_callback_python_cannot_raise_from_still_stops_the_run(tmp_path):
    # The signal lands in a __del__ (as it can in an at-fork handler): Python would print
    # "Exception ignored ... Traceback" and run on to exit 0; the run must still stop with 143.
    script = textwrap.dedent(
        """
        import os, signal, time
        from autotune_rewrite import interrupts

        class Dies:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)  # the handler runs here, inside __del__

        def entry():
            Dies()
            for _ in range(50):
                time.sleep(0.1)
            print("ran to the end")

        interrupts.run(entry, lambda signum: print("stopped", signum))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": pythonpath()},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 143, (proc.stdout, proc.stderr)
    assert proc.stdout == "stopped 15\n" and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGINT, 7)])
def test_a_worker_signalled_before_it_resets_its_handlers_stays_quiet(signum, status):
    """A forked pool worker has the parent's handler until ``reset_in_child`` runs; a signal in
    that window (the parent stopping its pool) must not raise ``Interrupted`` there, which
    multiprocessing prints as a traceback: SIGTERM ends it quietly, the terminal's SIGINT is
    ignored (the parent decides)."""
    code = textwrap.dedent(f"""
        import os, signal, time
        from autotune_rewrite import interrupts
        interrupts.install()
        pid = os.fork()
        if pid == 0:
            os.kill(os.getpid(), {int(signum)})
            time.sleep(0.5)
            os._exit(7)
        _, raw = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(raw))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=pythonpath()))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(status) and proc.stderr == ""


def test_a_signal_that_python_wraps_in_a_runtime_error_is_still_an_interrupt():
    # Python 3.11 wraps what ``__set_name__`` raises (here the SIGINT handler's ``Interrupted``,
    # landing while a class body is set up, e.g. a dataclass imported mid-run) in a RuntimeError:
    # the CLI's crash backstop must see the interrupt through it (130), not report a bug (2).
    script = textwrap.dedent(
        """
        import os, signal, sys
        from autotune_rewrite import cli

        class Signals:
            def __set_name__(self, owner, name):
                os.kill(os.getpid(), signal.SIGINT)

        def command():
            class Owner:
                field = Signals()
            print("ran to the end")

        cli.app = command
        sys.argv = ["autotune-rewrite", "check"]
        cli.main()
        """
    )
    proc = _run_command_script(script)
    assert proc.returncode == 130, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert "interrupted" in proc.stderr


def _run_command_script(script: str) -> subprocess.CompletedProcess:
    """A script that installs a fake command as the CLI's app and runs the CLI's entry point."""
    env = {**os.environ, "PYTHONPATH": pythonpath(), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)


def test_a_cleanup_that_fails_while_a_signal_unwinds_a_command_is_still_the_signal():
    # A pool's shutdown() raised "cannot join thread before it is started" when SIGTERM landed
    # while the pool was starting; the command's crash handler reported a bug (exit 2). Every
    # command reports its errors through ``cli_common.crash``, which now sees the signal.
    script = textwrap.dedent(
        """
        import os, signal, sys, time
        from autotune_rewrite import cli
        from autotune_rewrite.cli_common import crash

        def command():
            try:
                try:
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(5)
                finally:
                    raise RuntimeError("cannot join thread before it is started")
            except Exception as exc:
                raise crash(exc, "check")

        cli.app = command
        sys.argv = ["autotune-rewrite", "check"]
        cli.main()
        """
    )
    proc = _run_command_script(script)
    assert proc.returncode == 143, (proc.stdout, proc.stderr)
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert "stopped by SIGTERM" in proc.stderr


def test_found_in_follows_causes_and_contexts_only():
    stop = interrupts.Interrupted(signal.SIGTERM)
    try:
        try:
            raise stop
        except interrupts.Interrupted as inner:
            raise ValueError("a library's wrapper") from inner
    except ValueError as wrapped:
        assert interrupts.found_in(wrapped) is stop
    assert interrupts.found_in(RuntimeError("a bug of ours")) is None


def test_a_pool_worker_ends_when_the_tool_is_sigkilled():
    """Every pool comes from ``interrupts.process_pool``: a forked worker holds both ends of its
    queue's pipe, so without the death signal it waits for work forever after a SIGKILL and keeps
    the caller's pipes open (the scan's pool once did: CI's ``communicate()`` after a kill hung)."""
    code = textwrap.dedent("""
        import os, sys, time
        from autotune_rewrite import interrupts
        pool = interrupts.process_pool(1)
        print(pool.submit(os.getpid).result(), flush=True)
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=pythonpath()))
    worker = int(proc.stdout.readline())
    proc.kill()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{worker}/stat") as stat:  # a zombie waiting for init to reap it has ended
            if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.1)
    else:
        os.kill(worker, signal.SIGKILL)
        pytest.fail("the pool worker outlived its SIGKILLed parent by 30 s")
    proc.stdout.close()
