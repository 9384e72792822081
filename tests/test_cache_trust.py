"""The disk cache's trust model: it reads only regular files that nobody but this user can write, in a
folder nobody else can write to, and only entries signed with this user's HMAC key; anything else is
refused with a warning (once) and compiled instead. Entries are machine code, so each refusal here is a
crash or a hijack that did not happen."""
import hashlib
import logging
import os
import stat
import threading

import pytest
from test_compile_cache import _meta_and_objects, call, entries

import tracejit as tj
from tracejit.backend import disk_cache


def the_entry(cache_dir):
    """The path of the one entry that call() writes."""
    assert call()[1] is False
    (path,) = entries(cache_dir)
    return path


def test_the_key_is_private_and_entries_are_signed_with_it(cache_dir):
    path = the_entry(cache_dir)
    key_file = cache_dir / disk_cache.KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(key_file.read_bytes()) == disk_cache.KEY_BYTES
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    key = disk_cache.mac_key(str(cache_dir))
    assert key == key_file.read_bytes()
    meta, _ = _meta_and_objects(path.read_bytes())
    assert disk_cache.decode(path.read_bytes(), meta["key"], meta["names"], dict.fromkeys(meta["symbols"]), key)[0]
    assert call()[1] is True


def test_fifo_in_place_of_an_entry_does_not_block(cache_dir, caplog):
    path = the_entry(cache_dir)
    path.unlink()
    os.mkfifo(path)
    (cache_dir / "zzz.tjc").unlink(missing_ok=True)
    os.mkfifo(cache_dir / "zzz.tjc")             # another FIFO, for the eviction scan
    blocked = []

    def unblock():
        """Should a reader be stuck in open(), open the writing end: it then reads nothing and goes on."""
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            blocked.append(True)
        except OSError:
            pass

    timer = threading.Timer(20.0, unblock)
    timer.start()
    try:
        with caplog.at_level(logging.WARNING, logger="tracejit"):
            assert call()[1] is False
    finally:
        timer.cancel()
    assert not blocked and "an entry is not a regular file" in caplog.text
    assert stat.S_ISREG(path.lstat().st_mode) and call()[1] is True       # the fresh entry replaced it
    assert stat.S_ISFIFO((cache_dir / "zzz.tjc").lstat().st_mode)          # eviction leaves what is not an entry


def test_symlink_out_of_the_folder_is_not_followed(cache_dir, tmp_path, caplog):
    path = the_entry(cache_dir)
    outside = tmp_path / "elsewhere.tjc"
    outside.write_bytes(path.read_bytes())      # a valid entry, even signed with our key
    path.unlink()
    path.symlink_to(outside)
    with caplog.at_level(logging.WARNING, logger="tracejit"):
        assert call()[1] is False
    assert "an entry is a symbolic link" in caplog.text
    assert not path.is_symlink() and call()[1] is True
    assert outside.read_bytes() != b"" and len(list(tmp_path.iterdir())) == 2   # the target was not touched


def test_entry_writable_by_group_is_not_read(cache_dir, caplog):
    path = the_entry(cache_dir)
    os.chmod(path, 0o660)
    with caplog.at_level(logging.WARNING, logger="tracejit"):
        assert call()[1] is False and call()[1] is True      # refused, then rewritten privately and read
    assert "an entry is writable by group or others (mode 660)" in caplog.text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.fixture
def another_user(monkeypatch):
    """make(path): the file or folder at path then belongs to someone else: chown to nobody as root, or
    this process claims another user id otherwise."""
    def make(path):
        if os.geteuid() == 0:
            os.chown(path, 65534, 65534)
        else:
            uid = os.getuid() + 1
            monkeypatch.setattr(os, "getuid", lambda: uid)
    return make


def test_entry_of_another_user_is_not_read(cache_dir, another_user, caplog):
    path = the_entry(cache_dir)
    another_user(path)
    with caplog.at_level(logging.WARNING, logger="tracejit"):
        assert call()[1] is False
    assert "an entry is owned by user id" in caplog.text


def test_folder_of_another_user_is_not_used(cache_dir, another_user, caplog):
    cache_dir.mkdir(mode=0o700)
    another_user(cache_dir)
    with caplog.at_level(logging.WARNING, logger="tracejit"):
        assert call()[1] is False and call()[1] is False
    assert "the folder is owned by user id" in caplog.text and not entries(cache_dir)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620], ids=oct)
def test_key_readable_or_writable_by_others_disables_the_cache(cache_dir, caplog, mode):
    cache_dir.mkdir(mode=0o700)
    key_file = cache_dir / disk_cache.KEY_FILE
    key_file.write_bytes(os.urandom(disk_cache.KEY_BYTES))
    os.chmod(key_file, mode)
    with caplog.at_level(logging.WARNING, logger="tracejit"):
        assert call()[1] is False and call()[1] is False
    assert f"the key file is readable or writable by group or others (mode {mode:o})" in caplog.text
    assert not entries(cache_dir)


def test_forged_entry_with_a_valid_checksum_is_refused(cache_dir, caplog):
    """An entry rewritten with a flipped byte in its code and a recomputed SHA-256 (the checksum a forger
    can compute) fails the HMAC, which needs the key: it is recompiled, never run."""
    path = the_entry(cache_dir)
    data = path.read_bytes()
    _, objects = _meta_and_objects(data)
    body = data[disk_cache.HEADER.size:]
    i = len(body) - len(objects) // 2
    body = body[:i] + bytes([body[i] ^ 0x5A]) + body[i + 1:]
    path.write_bytes(disk_cache.HEADER.pack(disk_cache.MAGIC, len(body) - len(objects), len(objects),
                                            hashlib.sha256(body).digest()) + body)
    with caplog.at_level(logging.INFO, logger="tracejit"):
        assert call()[1] is False
    assert "HMAC mismatch" in caplog.text and call()[1] is True


def test_entry_copied_from_another_cache_is_recompiled(tmp_path, monkeypatch):
    """Each cache folder has its own key: an entry copied from another (another user's, another machine's)
    is recompiled rather than trusted."""
    first, second = tmp_path / "a", tmp_path / "b"
    monkeypatch.setattr(tj.config, "disk_cache", True)
    for d in (first, second):
        monkeypatch.setattr(tj.config, "cache_dir", str(d))
        assert call()[1] is False
    (a,), (b,) = entries(first), entries(second)
    assert a.name == b.name and a.read_bytes() != b.read_bytes()      # same key, other signatures
    b.write_bytes(a.read_bytes())
    assert call()[1] is False and call()[1] is True
