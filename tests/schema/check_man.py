#!/usr/bin/env python3
"""Checks the cudag(1) man page that tools/cli/mkman.py makes from README.md.

    check_man.py SRCROOT VERSION [BUILT_PAGE] [--installed=DIR/=PATH/]...

- mkman.py turns README.md's CLI section into a page with NAME, SYNOPSIS
  (one line per subcommand) and DESCRIPTION, and refuses a README without
  the section;
- the page renders without a single warning through every formatter found:
  groff (-t -man -ww, with tbl), man -l --warnings, mandoc -Tlint;
- BUILT_PAGE, when given (the page meson built and installs), is the same
  page apart from its .TH line (its date follows SOURCE_DATE_EPOCH);
- with --installed=DIR/=PATH/ (what meson passes mkman.py), the page names
  PATH/, where the files are installed, and not the source tree's DIR/.

Exits 0 on success, 1 on a failure.  Python 3 standard library only.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = 0


def ok(what):
    print(f"ok   {what}")


def fail(what, why=""):
    global failures
    failures += 1
    print(f"FAIL {what}")
    for line in str(why).splitlines():
        print(f"     {line}")


def run(cmd, **kw):
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MAN_DISABLE_SECCOMP="1")
    return subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)


def sections(page):
    return re.findall(r'^\.SH "?([^"\n]*)"?$', page, re.M)


def main(argv):
    installed = [a for a in argv[1:] if a.startswith("--installed=")]
    argv = [a for a in argv if not a.startswith("--installed=")]
    if len(argv) not in (3, 4):
        print(__doc__)
        return 2
    src, version = argv[1], argv[2]
    mkman = os.path.join(src, "tools", "cli", "mkman.py")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cudag.1")
        r = run([sys.executable, mkman, "--version", version, "-o", out]
                + installed + [os.path.join(src, "README.md")])
        if r.returncode != 0:
            fail("mkman.py writes the page", r.stderr)
            return 1
        ok("mkman.py writes the page from README.md")
        page = open(out, encoding="utf-8").read()

        # A README without the section must fail loudly, not make an empty page.
        bare = os.path.join(tmp, "README.md")
        with open(bare, "w", encoding="utf-8") as f:
            f.write("# cudag\n\nNo CLI section here.\n")
        r = run([sys.executable, mkman, "-o", os.path.join(tmp, "x.1"), bare])
        if r.returncode == 1 and "cli:begin" in r.stderr:
            ok("mkman.py refuses a README without the CLI section")
        else:
            fail("mkman.py refuses a README without the CLI section",
                 f"exit {r.returncode}: {r.stderr}")

        # The page points at files where they are installed, not at the
        # source tree's docs/ and schema/, which a reader of it lacks.
        for pair in installed:
            where, _, there = pair[len("--installed="):].partition("=")
            plain_page = page.replace("\\-", "-")
            if re.search(r"\\fB" + re.escape(where), plain_page):
                fail(f"the page names the source tree's {where}")
            elif there not in plain_page:
                fail(f"the page names {there}")
            else:
                ok(f"the page names {there}, not {where}")

        # A prefix is any path: mktemp's capitals and digits (/tmp/tmp.Y8QIQQNGBZ),
        # a dash, a dot.  It is named as it is, never set in part as a metavariable.
        odd = "/tmp/tmp.Y8QIQQNGBZ/my-PREFIX_2.0/share/doc/cudag/"
        r = run([sys.executable, mkman, "-o", os.path.join(tmp, "odd.1"),
                 f"--installed=docs/={odd}", os.path.join(src, "README.md")])
        odd_page = open(os.path.join(tmp, "odd.1"), encoding="utf-8").read() \
            if r.returncode == 0 else r.stderr
        want = "\\fB" + odd.replace("-", "\\-") + "language.md\\fR"
        if r.returncode == 0 and want in odd_page and "\x01" not in odd_page:
            ok("an installed path with capitals is named verbatim, in bold")
        else:
            found = re.findall(r"\S*language\.md\S*", odd_page)[:2]
            fail("an installed path with capitals is named verbatim, in bold",
                 f"want {want}; found {found}")

        secs = sections(page)
        if secs[:3] == ["NAME", "SYNOPSIS", "DESCRIPTION"]:
            ok(f"sections: {', '.join(secs)}")
        else:
            fail("page opens with NAME, SYNOPSIS, DESCRIPTION", secs)
        if re.search(r"^\.TH CUDAG 1 .*\"cudag " + re.escape(version) + '"', page, re.M):
            ok(".TH names cudag(1) and the version")
        else:
            fail(".TH names cudag(1) and the version", page.splitlines()[:3])
        if re.search(r"^\.SH NAME\ncudag \\- \S", page, re.M):
            ok("NAME line is `cudag \\- …` (whatis and apropos read it)")
        else:
            fail("NAME line is `cudag \\- …`")
        synopsis = page.split(".SH SYNOPSIS", 1)[-1].split(".SH ", 1)[0]
        missing = [c for c in ("check", "dot", "plan", "run", "bench")
                   if f'.SY "cudag {c}"' not in synopsis]
        if missing:
            fail("SYNOPSIS has a line for every subcommand", f"missing: {missing}")
        else:
            ok("SYNOPSIS has a line for every subcommand")

        checked = 0
        if shutil.which("groff"):
            r = run(["groff", "-t", "-man", "-Tutf8", "-ww", "-z", out])
            checked += 1
            if r.returncode == 0 and not r.stderr.strip():
                ok("groff -t -man -Tutf8 -ww: no warnings")
            else:
                fail("groff -t -man -Tutf8 -ww: no warnings", r.stderr)
            text = run(["groff", "-t", "-man", "-Tutf8", "-P-c", out]).stdout
            text = re.sub(r".\x08", "", text)
            if re.search(r"^ +cudag - \S", text, re.M):
                ok("the rendered page shows the NAME line")
            else:
                fail("the rendered page shows the NAME line", text[:600])
        if shutil.which("man"):
            r = run(["man", "--warnings", "-l", "-P", "cat", out])
            checked += 1
            if r.returncode == 0 and not r.stderr.strip():
                ok("man --warnings -l: no warnings")
            else:
                fail("man --warnings -l: no warnings", r.stderr)
        if shutil.which("mandoc"):
            r = run(["mandoc", "-Tlint", "-Wwarning", out])
            checked += 1
            if r.returncode == 0 and not (r.stdout + r.stderr).strip():
                ok("mandoc -Tlint: no warnings")
            else:
                fail("mandoc -Tlint: no warnings", r.stdout + r.stderr)
        if not checked:
            print("note: no groff, man or mandoc here: the page was not rendered")

        if len(argv) == 4:
            built = argv[3]
            if not os.path.exists(built):
                fail(f"the build made {built}")
            else:
                strip = lambda s: re.sub(r"^\.TH .*$", "", s, flags=re.M)
                same = strip(open(built, encoding="utf-8").read()) == strip(page)
                if same:
                    ok(f"{built} is the page README.md gives")
                else:
                    fail(f"{built} is the page README.md gives",
                         "rebuild: README.md or mkman.py changed")
    print(f"{failures} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
