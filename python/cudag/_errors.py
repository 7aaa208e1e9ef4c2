"""cudag_error values as Python: the exception every failing call raises,
the diagnostics a load or check reports, and how they print (as the
`cudag` command prints them: `file:line:col: error: message`, the source
line and a caret)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from . import _capi as C

_SEVERITY = {C.SEV_ERROR: "error", C.SEV_WARNING: "warning",
             C.SEV_NOTE: "note"}


@dataclass(frozen=True)
class Diagnostic:
    """One error, warning or note, with its position (line and column are
    1-based; 0 when the problem has no place in a file)."""

    severity: str
    message: str
    file: str = ""
    line: int = 0
    column: int = 0
    code: int = 0
    cuda_result: int = 0

    @classmethod
    def _from_c(cls, e: C.cudag_error) -> "Diagnostic":
        return cls(severity=_SEVERITY.get(e.severity, "error"),
                   message=C.text(e.message), file=C.text(e.file),
                   line=e.line, column=e.column, code=e.code,
                   cuda_result=e.cuda_result)

    def __str__(self) -> str:
        if self.file and self.line > 0:
            return (f"{self.file}:{self.line}:{self.column}: "
                    f"{self.severity}: {self.message}")
        if self.file:
            return f"{self.file}: {self.severity}: {self.message}"
        return f"{self.severity}: {self.message}"

    def format(self, source: str | None = None) -> str:
        """The diagnostic as the CLI prints it: the first line, then the
        source line it points at and a caret under the column, where the
        source is known (`source`, else the file read again)."""
        text = str(self)
        src = _source_line(self.file, self.line, source)
        if src is None:
            return text
        pad = "".join("\t" if ch == "\t" else " "
                      for ch in src[:max(self.column - 1, 0)])
        return f"{text}\n {self.line:5d} | {src}\n       | {pad}^"


def _source_line(file: str, line: int, source: str | None) -> str | None:
    if line <= 0:
        return None
    if source is None:
        if not file or file.startswith("<"):
            return None
        try:
            with open(file, encoding="utf-8", errors="replace") as f:
                source = f.read()
        except OSError:
            return None
    lines = source.split("\n")
    if line > len(lines) or len(lines[line - 1]) > 400:
        return None
    # Control characters shown escaped, as the CLI does: a hostile file
    # must not reprogram the terminal.
    return "".join(ch if ch == "\t" or (ord(ch) >= 0x20 and ord(ch) != 0x7f)
                   else f"\\x{ord(ch):02x}" for ch in lines[line - 1])


class Error(Exception):
    """A failed cudag call.  `code` is the cudag_status (`status` its name,
    such as "CUDAG_EUNKNOWN"), `file`, `line`, `column` and `message` the
    first error, `diagnostics` every error and warning the call reported,
    `count` how many errors.  str() prints them all like the CLI."""

    def __init__(self, first: Diagnostic, diagnostics=(), count: int = 1,
                 source: str | None = None):
        self.code = first.code
        self.status = C.text(C.lib.cudag_status_name(first.code))
        self.message = first.message
        self.file = first.file
        self.line = first.line
        self.column = first.column
        self.cuda_result = first.cuda_result
        self.count = max(count, 1)
        self.diagnostics = list(diagnostics) or [first]
        if first not in self.diagnostics:
            self.diagnostics.insert(0, first)
        self._source = source
        super().__init__(str(first))

    def __str__(self) -> str:
        shown = [d for d in self.diagnostics if d.severity != "note"] or \
            self.diagnostics
        return "\n".join(d.format(self._source) for d in shown)


class GraphWarning(UserWarning):
    """A warning reported while loading, checking or instantiating a graph
    (an unused buffer, a programmatic edge built as a full edge, …)."""


@dataclass
class Collector:
    """Receives a call's diagnostics through the C callback (cudag_diag_fn).
    The ctypes callback object lives as long as the collector."""

    source: str | None = None
    items: list = field(default_factory=list)

    def __post_init__(self):
        self.fn = C.DIAG_FN(self._receive)

    def _receive(self, _user, e):
        self.items.append(Diagnostic._from_c(e.contents))

    def error(self, err: C.cudag_error) -> Error:
        return Error(Diagnostic._from_c(err), self.items, err.count,
                     self.source)

    def warn(self, stacklevel: int = 3):
        """Issues every warning collected as a GraphWarning."""
        for d in self.items:
            if d.severity == "warning":
                warnings.warn(d.format(self.source), GraphWarning,
                              stacklevel=stacklevel)

    @property
    def warnings(self) -> list:
        return [d for d in self.items if d.severity == "warning"]


def fail(err: C.cudag_error, source: str | None = None) -> Error:
    """The exception for a failed call that reported through `err` alone."""
    return Error(Diagnostic._from_c(err), (), err.count, source)


def usage(message: str, code: int = C.EINVAL) -> Error:
    """An error of the binding itself (a closed handle, a bad array), shaped
    like the library's (CUDAG_EINVAL unless told)."""
    return Error(Diagnostic("error", message, code=code))


def check(rc: int, err: C.cudag_error, source: str | None = None) -> None:
    if rc != C.OK:
        raise fail(err, source)


def new_error() -> C.cudag_error:
    return C.cudag_error()


__all__ = ["Error", "Diagnostic", "GraphWarning"]
