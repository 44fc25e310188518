#!/usr/bin/python3
"""test/fleet_cli.py: the command line of tools/shardid-fleet against its
help and its manual page, so that neither drifts from the code.

  - every option and argument of every command has a help text;
  - "shardid-fleet --help" exits 0 and lists every command with its usage
    line; "shardid-fleet COMMAND --help" exits 0 and shows every option;
    "python3 -m shardid_fleet --help" and the launcher run through a
    symbolic link (as /usr/bin/shardid-fleet is) print the same help;
  - docs/shardid-fleet.1 has a section (.SS COMMAND) per command that
    describes (.TP) every option and argument of the command and nothing
    that the command lacks, its SYNOPSIS names every option, and groff
    formats it without a warning;
  - docs/fleet.md's map is tools/examples/fleet.map, byte for byte;
  - the tool's version (shardid_fleet.__version__) is the release's, as
    META.json and debian/changelog give it, and the manual page's header
    names its major and minor.

The options are taken from argparse itself: main() is run with
ArgumentParser.parse_args replaced, so the parser it builds is caught
before it parses anything.  Prints "ok N - ..." or "not ok N - ..." per
test and closes with "fleet-cli: N passed, N failed".  Needs python3-psycopg
(cli.py imports it) and groff.

Usage: /usr/bin/python3 test/fleet_cli.py
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tool = os.path.join(here, "tools", "shardid-fleet")
manpage = os.path.join(here, "docs", "shardid-fleet.1")
sys.path.insert(0, os.path.join(here, "tools"))
sys.dont_write_bytecode = True

from shardid_fleet import cli  # noqa: E402

results = []


def check(ok, what, detail=""):
    results.append(ok)
    print("%s %d - %s" % ("ok" if ok else "not ok", len(results), what))
    if not ok and detail:
        for line in str(detail).rstrip("\n").split("\n"):
            print("#   " + line)


#
# The parser, as main() builds it
#

class Caught(Exception):
    def __init__(self, parser):
        self.parser = parser


def catch(self, args=None, namespace=None):
    raise Caught(self)


real_parse_args = argparse.ArgumentParser.parse_args
argparse.ArgumentParser.parse_args = catch
try:
    cli.main([])
    sys.exit("cli.main() returned without parsing its arguments")
except Caught as e:
    top = e.parser
finally:
    argparse.ArgumentParser.parse_args = real_parse_args

subs = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
commands = dict(subs[0].choices) if subs else {}
check(sorted(commands) == sorted(["check", "apply", "router", "status", "move"]),
      "the commands are check, apply, router, status, move", sorted(commands))


def arguments(parser):
    """[(name, action)]: option strings (each one) and positional metavars"""
    out = []
    for a in parser._actions:
        if isinstance(a, argparse._HelpAction):
            continue
        if a.option_strings:
            out += [(o, a) for o in a.option_strings]
        else:
            out.append((a.metavar or a.dest, a))
    return out


args = {c: arguments(p) for c, p in commands.items()}
for c, p in commands.items():
    nohelp = [n for n, a in args[c] if not a.help or a.help == argparse.SUPPRESS]
    check(not nohelp, "%s: every option and argument has a help text" % c,
          "without one: " + " ".join(nohelp))

#
# --help
#

env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", COLUMNS="80")


def run(argv):
    p = subprocess.run([sys.executable, tool] + argv, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env=env, universal_newlines=True)
    return p.returncode, p.stdout


rc, text = run(["--help"])
check(rc == 0, "shardid-fleet --help exits 0", "exit %d\n%s" % (rc, text))
for c in commands:
    check(re.search(r"^    %s +\S" % c, text, re.M) is not None
          and re.search(r"^  shardid-fleet %s \[-h\]" % c, text, re.M) is not None,
          "shardid-fleet --help lists %s with its usage line" % c, text)
for c in commands:
    rc, text = run([c, "--help"])
    missing = [n for n, a in args[c] if not re.search(r"(^|[\s\[|])%s([\s,\]]|$)" % re.escape(n), text)]
    check(rc == 0 and text.startswith("usage: shardid-fleet %s " % c) and not missing,
          "shardid-fleet %s --help exits 0 and shows every option" % c,
          "exit %d; missing: %s\n%s" % (rc, " ".join(missing), text))

# python3 -m shardid_fleet, and the launcher through a symbolic link in
# another directory (as the Debian package installs it in /usr/bin): the
# same help, found without any edit of the module path
rc, text = run(["--help"])
p = subprocess.run([sys.executable, "-m", "shardid_fleet", "--help"], stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, universal_newlines=True,
                   env=dict(env, PYTHONPATH=os.path.join(here, "tools")))
check(p.returncode == 0 and p.stdout == text, "python3 -m shardid_fleet --help is the launcher's help",
      "exit %d\n%s" % (p.returncode, p.stdout))
with tempfile.TemporaryDirectory() as bindir:
    os.symlink(tool, os.path.join(bindir, "shardid-fleet"))
    p = subprocess.run([sys.executable, os.path.join(bindir, "shardid-fleet"), "--help"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, env=env, cwd=bindir)
check(p.returncode == 0 and p.stdout == text, "the launcher run through a symbolic link finds its package",
      "exit %d\n%s" % (p.returncode, p.stdout))

#
# The manual page
#

with open(manpage, encoding="utf-8") as f:
    page = f.read()


def plain(line):
    """a troff line as text: \\- as -, font changes and \\& dropped"""
    line = line.replace("\\-", "-").replace("\\&", "").replace("\\|", "")
    return re.sub(r"\\f(\[[^]]*\]|.)", "", line)


sections = {}       # .SS heading -> its lines, up to the next .SS or .SH
synopsis = []
where = None
for line in page.split("\n"):
    if line.startswith(".SH "):
        where = "synopsis" if line.strip() == ".SH SYNOPSIS" else None
        continue
    if line.startswith(".SS "):
        where = line[4:].strip().strip('"')
        sections[where] = []
        continue
    if where == "synopsis":
        synopsis.append(plain(line))
    elif where is not None:
        sections[where].append(line)


def tags(lines):
    """the first word of each .TP tag line: the option or argument it describes"""
    out = []
    for i, line in enumerate(lines[:-1]):
        if line.strip() == ".TP":
            m = re.match(r"\.(?:B|I|BI|BR|IR)\s+\"?([^\s\"]+)", plain(lines[i + 1]))
            out.append(m.group(1) if m else plain(lines[i + 1]))
    return out


for c in commands:
    if c not in sections:
        check(False, "shardid-fleet.1 has a section .SS %s" % c)
        continue
    described = tags(sections[c])
    want = [n for n, a in args[c]]
    missing = [n for n in want if n not in described]
    extra = [n for n in described if n not in want]
    check(not missing and not extra,
          "shardid-fleet.1, .SS %s: describes every option and argument of %s, and no other" % (c, c),
          "not described: %s\ndescribed, but %s has no such option: %s"
          % (" ".join(missing) or "-", c, " ".join(extra) or "-"))
unknown = [s for s in sections if s not in commands]
check(not unknown, "shardid-fleet.1: every .SS section is a command", " ".join(unknown))

syn = " ".join(synopsis)
missing = sorted({n for c in commands for n, a in args[c] if n.startswith("-") and
                  not re.search(r"(^|[\s\[])%s([\s\]]|$)" % re.escape(n), syn)})
check(not missing, "shardid-fleet.1: the SYNOPSIS names every option", " ".join(missing))

if shutil.which("groff"):
    p = subprocess.run(["groff", "-man", "-ww", "-z", "-Tutf8", manpage],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    check(p.returncode == 0 and p.stdout == "", "groff formats shardid-fleet.1 without a warning", p.stdout)
else:
    check(False, "groff formats shardid-fleet.1 without a warning", "groff is not installed")

#
# The example map: docs/fleet.md shows tools/examples/fleet.map as it is
#

with open(os.path.join(here, "docs", "fleet.md")) as f:
    doc = f.read()
m = re.search(r"<!-- fleet_cli: example map -->\n```\n(.*?)```\n", doc, re.S)
with open(os.path.join(here, "tools", "examples", "fleet.map")) as f:
    example = f.read()
check(m is not None and m.group(1) == example,
      "docs/fleet.md shows tools/examples/fleet.map, the example the package installs, as it is",
      "no block after the marker" if m is None else "the doc's block differs from the file")

#
# The version: META.json's, debian/changelog's (less its Debian
# revision), the package's and the manual page's are one
#

import json  # noqa: E402
import shardid_fleet  # noqa: E402

with open(os.path.join(here, "META.json")) as f:
    release = json.load(f)["version"]
with open(os.path.join(here, "debian", "changelog")) as f:
    m = re.match(r"\S+ \(([^)]+)\)", f.readline())
debian = m.group(1).rsplit("-", 1)[0] if m else None
th = re.search(r'^\.TH .* "shardid ([0-9.]+)"', page, re.M)
check(shardid_fleet.__version__ == release == debian,
      "shardid_fleet.__version__ is the release's version (META.json, debian/changelog)",
      "__version__ %s, META.json %s, debian/changelog %s" % (shardid_fleet.__version__, release, debian))
check(th is not None and release.startswith(th.group(1) + "."),
      "shardid-fleet.1's header names the release (shardid %s)" % ".".join(release.split(".")[:2]),
      th.group(0) if th else "no .TH line naming shardid's version")

failed = results.count(False)
print("fleet-cli: %d passed, %d failed" % (len(results) - failed, failed))
sys.exit(1 if failed else 0)
