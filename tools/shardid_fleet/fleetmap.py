"""The map file and its lock."""

import errno
import fcntl
import os
import re
import secrets
import stat
import sys

from .common import FleetError, MAX_SHARD, NSHARDS, mask


#
# The map file
#

class FleetMap:
    """A parsed map: owner[n] is the connection string of logical shard n."""

    def __init__(self, path, owner, provisioned, lines):
        self.path = path
        self.owner = owner
        self.provisioned = provisioned
        self.lines = lines          # (is_range_line, text)

    def servers(self):
        seen = []
        for conn in self.owner:
            if conn not in seen:
                seen.append(conn)
        return seen

    def shards_on(self, conn, all_shards=False):
        return [n for n in range(NSHARDS)
                if self.owner[n] == conn and (all_shards or n in self.provisioned)]

    def range_rows(self, owner=None):
        """[(first, last, conn)] of the ranges of an owner list"""
        owner = owner or self.owner
        rows = []
        first = 0
        for n in range(1, NSHARDS + 1):
            if n == NSHARDS or owner[n] != owner[first]:
                rows.append((first, n - 1, owner[first]))
                first = n
        return rows

    def render(self, owner, note):
        """The map file's text for a new owner list: its comments and
        provision lines kept where they are, its range lines replaced at
        the first one's place, and a comment line appended."""
        text = []
        placed = False
        for is_range, line in self.lines:
            if not is_range:
                text.append(line)
            elif not placed:
                for first, last, conn in self.range_rows(owner):
                    text.append("%-5d %-5d %s" % (first, last, conn))
                placed = True
        if not placed:
            for first, last, conn in self.range_rows(owner):
                text.append("%-5d %-5d %s" % (first, last, conn))
        while text and text[-1] == "":
            text.pop()
        text.append("# " + note)
        return "\n".join(text) + "\n"


def load_map(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise FleetError('cannot read map file "%s": %s' % (path, e.strerror))
    text = data.decode("utf-8", "surrogateescape")
    owner = [None] * NSHARDS
    provisioned = set()
    nprov = 0
    lines = []
    problems = []

    def isint(x):
        return re.fullmatch(r"[0-9]+", x) is not None and int(x) <= MAX_SHARD

    raw_lines = text.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()
    for lineno, raw in enumerate(raw_lines, 1):
        line = raw.strip(" \t\r")
        if line == "" or line.startswith("#"):
            lines.append((False, raw))
            continue
        fields = re.split(r"[ \t]+", line)
        if fields[0] == "provision":
            lines.append((False, raw))
            if len(fields) != 3 or not isint(fields[1]) or not isint(fields[2]) \
                    or int(fields[1]) > int(fields[2]):
                problems.append('%s:%d: expected "provision FIRST LAST" with 0 <= FIRST <= LAST <= %d'
                                % (path, lineno, MAX_SHARD))
                continue
            provisioned.update(range(int(fields[1]), int(fields[2]) + 1))
            nprov += 1
            continue
        lines.append((True, raw))
        m = re.fullmatch(r"([0-9]+)[ \t]+([0-9]+)[ \t]+(.+)", line)
        if not m or not isint(m.group(1)) or not isint(m.group(2)) \
                or int(m.group(1)) > int(m.group(2)):
            problems.append('%s:%d: expected "FIRST LAST CONNSTRING" with 0 <= FIRST <= LAST <= %d'
                            % (path, lineno, MAX_SHARD))
            continue
        conn = m.group(3)
        for n in range(int(m.group(1)), int(m.group(2)) + 1):
            if owner[n] is not None:
                problems.append("%s:%d: logical shard %d is mapped twice" % (path, lineno, n))
                break
            owner[n] = conn
    if not problems:
        for n in range(NSHARDS):
            if owner[n] is None:
                problems.append("%s: logical shard %d is not mapped; the ranges must cover 0 to %d"
                                % (path, n, MAX_SHARD))
                break
    if problems:
        for p in problems:
            sys.stderr.write(mask(p) + "\n")
        raise FleetError('map file "%s" is not valid' % path)
    if nprov == 0:
        provisioned = set(range(NSHARDS))
    return FleetMap(path, owner, provisioned, lines)


_HELD_LOCKS = []


class MapLock:
    """An exclusive lock on the map file for the whole run, so that two
    runs never work from, or write, the same map at once."""

    def __init__(self, path):
        self.path = path
        while True:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError as e:
                raise FleetError('cannot open map file "%s": %s' % (path, e.strerror))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                os.close(fd)
                if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise FleetError('map file "%s" is locked by another shardid-fleet run; '
                                     'wait for it to finish' % path)
                raise
            # the file may have been replaced while we waited: lock the new one
            st1 = os.fstat(fd)
            try:
                st2 = os.stat(path)
            except OSError:
                st2 = None
            if st2 is not None and (st1.st_dev, st1.st_ino) == (st2.st_dev, st2.st_ino):
                self.fd = fd
                _HELD_LOCKS.append(self)    # held until the process ends
                return
            os.close(fd)


def _map_temp(path):
    """A new, exclusively created temporary file next to path."""
    real = os.path.realpath(path)
    d, base = os.path.split(real)
    for _ in range(100):
        tmp = os.path.join(d, ".%s.%s.tmp" % (base, secrets.token_hex(8)))
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600)
            return real, d, tmp, fd
        except FileExistsError:
            continue
        except OSError as e:
            raise FleetError('cannot create a file in the directory of map file "%s" (%s): %s'
                             % (path, d, e.strerror))
    raise FleetError("cannot create a temporary file next to map file \"%s\"" % path)


def probe_map_writable(path):
    """Fail now, before a move changes anything, if the map cannot be
    rewritten later."""
    real, d, tmp, fd = _map_temp(path)
    os.close(fd)
    os.unlink(tmp)


def write_map_atomically(path, content):
    """Replace the map file: a temporary file in the same directory
    (O_EXCL, unpredictable name) with the old file's mode and owner,
    fsync, rename, fsync of the directory."""
    real, d, tmp, fd = _map_temp(path)
    try:
        st = os.stat(real)
        os.fchmod(fd, stat.S_IMODE(st.st_mode))
        if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
            try:
                os.fchown(fd, st.st_uid, st.st_gid)
            except PermissionError:
                pass
        data = content.encode("utf-8", "surrogateescape")
        while data:
            n = os.write(fd, data)
            data = data[n:]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.rename(tmp, real)
        dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError as e:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise FleetError('cannot rewrite map file "%s": %s' % (path, e.strerror))
