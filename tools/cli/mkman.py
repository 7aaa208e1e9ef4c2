#!/usr/bin/env python3
"""mkman.py — writes the cudag(1) man page from README.md's CLI section.

    mkman.py [--version V] [--installed DIR/=PATH/]... [-o OUT] README.md

The man page has one source: the lines of README.md between
`<!-- cli:begin -->` and `<!-- cli:end -->`, so it cannot drift from the
README.  That section is read as a small Markdown subset:

  - its first paragraph's first sentence becomes NAME ("`cudag` checks …"
    gives "cudag \\- checks …"), and the whole intro (text before the first
    heading) becomes DESCRIPTION;
  - its first code block, if it comes before any heading, becomes SYNOPSIS;
  - the shallowest headings in it become .SH (upper-cased), deeper ones .SS;
  - paragraphs, fenced code blocks, `-`/`*` and `1.` lists, two-column
    tables (as tagged paragraphs: option, then meaning), wider tables (tbl),
    `code`, **strong**, *emphasis*, [links](url) and HTML comments (dropped).

Inside code, ALL-CAPS words (FILE, N, BUF=PATH) are set in italics as
metavariables and the rest in bold, as man pages do.  Anything else is kept
as text.  Python 3 standard library only; the date comes from
SOURCE_DATE_EPOCH when it is set, so builds are reproducible.  Exits 1 with
a message when the section is missing or has no first sentence.
"""

import argparse
import datetime
import os
import re
import sys

BEGIN = "<!-- cli:begin -->"
END = "<!-- cli:end -->"


def fail(msg):
    print(f"mkman.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


def esc(text):
    """Escapes text for roff: backslashes and non-ASCII characters."""
    text = text.replace("\\", "\\e")
    out = []
    for ch in text:
        if ord(ch) < 128:
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\[u{ord(ch):04X}]")
        else:
            out.append(f"\\[u{ord(ch):X}]")
    return "".join(out)


def literal(code):
    """Code as a man page sets it: metavariables italic, the rest bold."""
    parts = []
    pos = 0
    for m in re.finditer(r"[A-Z][A-Z0-9_]*", code):
        a, b = m.span()
        before = code[a - 1] if a > 0 else ""
        after = code[b] if b < len(code) else ""
        # -D, --Werror and Name are options or words, not metavariables.
        if before == "-" or before.isalnum() or after.isalnum() and after.islower():
            continue
        if a > pos:
            parts.append(("B", code[pos:a]))
        parts.append(("I", code[a:b]))
        pos = b
    if pos < len(code):
        parts.append(("B", code[pos:]))
    out = "".join("\\f" + font + esc(t).replace("-", "\\-") for font, t in parts)
    return out + "\\fR"


def inline(text):
    """Markdown inline markup to roff escapes."""
    out = []
    pos = 0
    rx = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*|(?<![\w*])\*([^*\s][^*]*?)\*(?!\w)"
                    r"|(?<![\w])_([^_\s][^_]*?)_(?!\w)|\[([^\]]+)\]\(([^)\s]+)\)"
                    r"|<(https?://[^>\s]+)>")
    for m in rx.finditer(text):
        out.append(esc(text[pos:m.start()]))
        code, strong, em1, em2, ltext, url, auto = m.groups()
        if code is not None:
            out.append(literal(code))
        elif strong is not None:
            out.append(f"\\fB{inline(strong)}\\fR")
        elif em1 is not None or em2 is not None:
            out.append(f"\\fI{inline(em1 if em1 is not None else em2)}\\fR")
        elif ltext is not None:
            if url.startswith(("http://", "https://")):
                out.append(f"{inline(ltext)} <{esc(url)}>")
            else:
                out.append(inline(ltext))
        else:
            out.append(f"<{esc(auto)}>")
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


def plain(text):
    """Text without markup, for NAME and headings."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[`*]|(?<!\w)_|_(?!\w)", "", text).strip()


def line(text):
    """One roff text line: a leading . or ' would be read as a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


def synopsis(text):
    """One synopsis line as .SY/.YS: the command in bold, then its arguments,
    filled with a hanging indent; a bracketed group never breaks inside."""
    words = text.split()
    k = 0
    while k < len(words) and re.match(r"^[a-z][a-z0-9_-]*$", words[k]):
        k += 1
    k = max(k, 1)
    out = [f'.SY "{esc(" ".join(words[:k]))}"']
    args = []
    depth = 0
    for tok in words[k:]:
        m = re.match(r"^(\[*)(.*?)(\]*(?:\.\.\.)?\]*)$", tok)
        pre, word, post = m.groups()
        piece = esc(pre) + (literal(word) if word else "") + esc(post)
        if depth > 0:
            args[-1] += "\\ " + piece
        else:
            args.append(piece)
        depth += pre.count("[") - post.count("]")
    if args:
        out.append(line(" ".join(args)))
    return out + [".YS"]


def section_lines(readme):
    lines = readme.splitlines()
    try:
        a = next(i for i, l in enumerate(lines) if l.strip() == BEGIN)
        b = next(i for i, l in enumerate(lines) if l.strip() == END and i > a)
    except StopIteration:
        fail(f"README.md has no '{BEGIN}' … '{END}' section")
    return lines[a + 1:b]


def blocks(lines):
    """Splits Markdown lines into (kind, payload) blocks."""
    i = 0
    n = len(lines)
    while i < n:
        l = lines[i]
        if not l.strip():
            i += 1
        elif l.lstrip().startswith("<!--"):
            while i < n and "-->" not in lines[i]:
                i += 1
            i += 1
        elif re.match(r"^\s*(```|~~~)", l):
            fence = l.strip()[:3]
            body = []
            i += 1
            while i < n and not lines[i].strip().startswith(fence):
                body.append(lines[i])
                i += 1
            i += 1
            yield "code", body
        elif re.match(r"^#{1,6} ", l):
            m = re.match(r"^(#+) +(.*?)\s*#*\s*$", l)
            yield "heading", (len(m.group(1)), m.group(2))
            i += 1
        elif l.lstrip().startswith("|"):
            rows = []
            while i < n and lines[i].lstrip().startswith("|"):
                cells = [c.strip() for c in re.split(r"(?<!\\)\|", lines[i].strip())[1:-1]]
                if not all(re.match(r"^:?-{3,}:?$", c) for c in cells):
                    rows.append([c.replace("\\|", "|") for c in cells])
                i += 1
            yield "table", rows
        elif re.match(r"^\s*([-*+]|\d+[.)])\s+", l):
            items = []
            ordered = bool(re.match(r"^\s*\d", l))
            while i < n and lines[i].strip():
                m = re.match(r"^\s*([-*+]|\d+[.)])\s+(.*)$", lines[i])
                if m:
                    items.append(m.group(2))
                else:
                    items[-1] += " " + lines[i].strip()
                i += 1
            yield ("olist" if ordered else "list"), items
        elif re.match(r"^\s*(-{3,}|\*{3,}|_{3,})\s*$", l):
            i += 1
        else:
            para = []
            while (i < n and lines[i].strip()
                   and not re.match(r"^(#{1,6} |\s*(```|~~~|\||<!--)|\s*([-*+]|\d+[.)])\s+)",
                                    lines[i])):
                para.append(lines[i].strip().lstrip(">").strip())
                i += 1
            yield "para", " ".join(para)


def render(md_lines, version, date):
    bl = list(blocks(md_lines))
    levels = [lvl for kind, p in bl if kind == "heading" for lvl in [p[0]]]
    top = min(levels) if levels else 0
    first_heading = next((k for k, (kind, _) in enumerate(bl) if kind == "heading"), len(bl))
    intro, rest = bl[:first_heading], bl[first_heading:]

    paras = [p for kind, p in intro if kind == "para"]
    if not paras:
        fail("the CLI section must open with a paragraph (its first sentence is NAME)")
    sentence = re.split(r"(?<=[.!?])\s", plain(paras[0]), maxsplit=1)[0].rstrip(".")
    words = sentence.split(None, 1)
    if len(words) == 2 and words[0] == "cudag":
        sentence = words[1]
    synopsis_block = next((p for kind, p in intro if kind == "code"), None)

    out = [
        "'\\\" t",
        ".\\\" Generated by tools/cli/mkman.py from README.md: edit the README, not this file.",
        f'.TH CUDAG 1 "{esc(date)}" "cudag {esc(version)}" "cudag manual"',
        ".SH NAME",
        f"cudag \\- {esc(sentence)}",
    ]
    if synopsis_block is not None:
        out.append(".SH SYNOPSIS")
        for l in synopsis_block:
            if l.strip():
                out += synopsis(l)
    out.append(".SH DESCRIPTION")
    emit(out, [b for b in intro if not (b[0] == "code" and b[1] is synopsis_block)], top)
    emit(out, rest, top)
    return "\n".join(out) + "\n"


def emit(out, bl, top):
    for kind, p in bl:
        if kind == "heading":
            lvl, text = p
            title = plain(text).replace('"', "'")
            if lvl == top:
                out.append(f'.SH "{esc(title.upper())}"')
            else:
                out.append(f'.SS "{esc(title)}"')
        elif kind == "para":
            out += [".PP", line(inline(p))]
        elif kind == "code":
            out += [".PP", ".RS 4", ".nf"]
            out += [line(esc(l).replace("-", "\\-")) for l in p]
            out += [".fi", ".RE"]
        elif kind in ("list", "olist"):
            for k, item in enumerate(p, 1):
                tag = "\\(bu 2" if kind == "list" else f"{k}. 4"
                out += [f".IP {tag}", line(inline(item))]
        elif kind == "table":
            emit_table(out, p)


def emit_table(out, rows):
    if not rows:
        return
    width = len(rows[0])
    body = rows[1:]
    if width == 2:
        # An option table reads best as tagged paragraphs, like any man page.
        for cells in body:
            out += [".TP", line(inline(cells[0])), line(inline(cells[1]))]
        return
    out += [".PP", ".TS", "tab(\t);", " ".join(["lb"] * width),
            " ".join(["l"] * (width - 1) + ["lx"]) + "."]
    out.append("\t".join(line(inline(c)) for c in rows[0]))
    out.append("_")
    for cells in body:
        cells = (cells + [""] * width)[:width]
        out.append("\t".join([line(inline(c)) for c in cells[:-1]]
                             + ["T{\n" + line(inline(cells[-1])) + "\nT}"]))
    out.append(".TE")


def main():
    ap = argparse.ArgumentParser(description="Writes cudag.1 from README.md's CLI section.")
    ap.add_argument("readme")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--version", default="")
    ap.add_argument("--installed", action="append", default=[],
                    metavar="DIR/=PATH/",
                    help="name the installed place of a source directory: "
                         "`DIR/x` in code becomes `PATH/x` (repeatable)")
    args = ap.parse_args()
    with open(args.readme, encoding="utf-8") as f:
        md = section_lines(f.read())
    # The page is read where cudag is installed, without the source tree:
    # `docs/language.md` there is the installed copy's path.
    installed = []
    for pair in args.installed:
        src, _, dst = pair.partition("=")
        if not src or not dst:
            fail(f"--installed takes DIR/=PATH/, not '{pair}'")
        installed.append(dst)
        # A placeholder, not the path: the path is no markup, and capitals
        # in it (a mktemp name) must not read as a metavariable.
        mark = f"\x01{len(installed) - 1}\x02"
        md = [l.replace("`" + src, "`" + mark) for l in md]
    date = ""
    if os.environ.get("SOURCE_DATE_EPOCH", "").isdigit():
        t = datetime.datetime.fromtimestamp(int(os.environ["SOURCE_DATE_EPOCH"]),
                                            tz=datetime.timezone.utc)
        date = t.strftime("%Y-%m-%d")
    page = render(md, args.version, date)
    for i, dst in enumerate(installed):
        page = page.replace(f"\x01{i}\x02", esc(dst).replace("-", "\\-"))
    if args.output == "-":
        sys.stdout.write(page)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
