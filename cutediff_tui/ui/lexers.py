"""Pygments lexers for NVIDIA SASS (nvdisasm) and PTX.

Token types, shared by both lexers so one colour map serves them:

| token                 | SASS                                   | PTX                              |
|-----------------------|----------------------------------------|----------------------------------|
| ``Keyword``           | opcode ``IADD3``                       | opcode ``ld``, ``mma``           |
| ``Name.Attribute``    | modifiers ``.LU.64``, ``.reuse``       | modifiers ``.global``, ``.sync`` |
| ``Keyword.Type``      |                                        | types ``.b32``, ``.f32``, ``.v4``|
| ``Keyword.Declaration``| directives ``.section``               | directives ``.reg``, ``.loc``    |
| ``Name.Variable``     | registers ``R1``, ``UR4``, ``P0``, ``B0``, ``RZ``, ``SR_TID.X`` | ``%r12``, ``%tid.x`` |
| ``Name.Decorator``    | guards ``@P0``, ``@!UP1``              | guards ``@%p5``, ``@!%p3``       |
| ``Name.Constant``     | constant banks ``c[0x0][0x37c]``       |                                  |
| ``Number.*``          | immediates ``0x70``, ``1.5``, ``+INF`` | ``0f3F800000``, ``42``           |
| ``Name.Label``        | ``.L_x_12``                            | ``$L__BB0_2``                    |
| ``Name.Tag``          | ``(*"SpillRefill"*)``                  |                                  |
| ``Name.Function``     | section / function names               | ``.entry`` names                 |
| ``Comment.*``         | ``//``, addresses ``/*0a10*/``         | ``//``, ``/* */``                |
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, default, words
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

__all__ = ["SassLexer", "PtxLexer", "lexer_for"]

#: Registers; ``•`` stands for a number in normalised text (``R•``).
_SASS_REG = r"(?:U?R(?:\d+|•)|URZ|RZ|U?P(?:[0-7]|•)|U?PT|B(?:\d+|•)|SRZ|SR_[A-Za-z0-9_.]+)(?![\w•])"


class SassLexer(RegexLexer):
    """NVIDIA SASS as printed by ``nvdisasm -c`` / ``cuobjdump -sass``."""

    name = "SASS"
    aliases = ["sass", "nvdisasm"]
    filenames = ["*.sass"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"/\*[0-9a-fA-F]{4,}\*/", Comment.Special),
            (r"/\*.*?\*/", Comment.Multiline),
            (r'\(\*".*?"\*\)', Name.Tag),
            (r"(\.L_x_\d+|\.L_\w+)(:)", bygroups(Name.Label, Punctuation)),
            (r"(\.text\.)([\w.$]+)(:)", bygroups(Keyword.Declaration, Name.Function, Punctuation)),
            (r"\.[A-Za-z_][\w]*", Keyword.Declaration, "directive"),
            (r"[{}]", Punctuation),
            (r"@!?U?P(?:[0-7]|T)\b", Name.Decorator),
            (r"([A-Z][A-Z0-9_]*)((?:\.[A-Za-z0-9_]+)*)", bygroups(Keyword, Name.Attribute), "operands"),
            (r"[\w$.]+(?=:)", Name.Function),
            (r":", Punctuation),
            (r".", Text),
        ],
        "directive": [
            (r"\n", Whitespace, "#pop"),
            (r"[ \t]+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r'"[^"]*"', String),
            (r"@\"?[A-Za-z_ ]+\"?", Name.Attribute),
            (r"0x[0-9a-fA-F]+|\d+", Number.Integer),
            (r"[\w$.]+", Name.Function),
            (r"[(),\-+]", Punctuation),
            (r".", Text),
        ],
        "operands": [
            (r";", Punctuation, "#pop"),
            (r"\n", Whitespace, "#pop"),
            (r"[ \t]+", Whitespace),
            (r"//.*?$", Comment.Single, "#pop"),
            (r'\(\*".*?"\*\)', Name.Tag),
            (r"/\*.*?\*/", Comment.Multiline),
            (
                r"(c)(\[)(0x[0-9a-fA-F]+)(\])(\[)(0x[0-9a-fA-F]+)(\])",
                bygroups(
                    Name.Constant, Punctuation, Name.Constant, Punctuation, Punctuation, Name.Constant, Punctuation
                ),
            ),
            (r"(`)(\()([.\w$]+)(\))", bygroups(Punctuation, Punctuation, Name.Label, Punctuation)),
            (r"\.L_x_\d+|\.L_\w+", Name.Label),
            (r"(" + _SASS_REG + r")((?:\.[A-Za-z0-9_]+)*)", bygroups(Name.Variable, Name.Attribute)),
            (r"[+-]?(?:INF|QNAN|NAN)\b", Number.Float),
            (r"-?0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+\.\d*(?:[eE][+-]?\d+)?|-?\d+[eE][+-]?\d+", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"(desc|gdesc|tmem|idesc|sdesc)\b", Name.Builtin),
            (r"[A-Za-z_][\w]*", Name),
            (r"[!~|\-+]", Operator),
            (r"[\[\]{}(),]", Punctuation),
            (r".", Text),
        ],
    }


_PTX_TYPES = (
    "b8",
    "b16",
    "b32",
    "b64",
    "b128",
    "s8",
    "s16",
    "s32",
    "s64",
    "u8",
    "u16",
    "u32",
    "u64",
    "f16",
    "f16x2",
    "bf16",
    "bf16x2",
    "f32",
    "f64",
    "tf32",
    "e4m3",
    "e5m2",
    "e4m3x2",
    "e5m2x2",
    "e2m1",
    "e2m1x2",
    "e2m3",
    "e3m2",
    "ue8m0",
    "pred",
    "v2",
    "v4",
    "v8",
)
_PTX_DIRECTIVES = (
    "version",
    "target",
    "address_size",
    "visible",
    "extern",
    "weak",
    "common",
    "entry",
    "func",
    "param",
    "reg",
    "local",
    "shared",
    "global",
    "const",
    "tex",
    "loc",
    "file",
    "section",
    "align",
    "maxnreg",
    "maxntid",
    "reqntid",
    "minnctapersm",
    "maxnctapersm",
    "pragma",
    "noreturn",
    "explicitcluster",
    "reqnctapercluster",
    "maxclusterrank",
    "callprototype",
    "alias",
    "calltargets",
    "branchtargets",
    "ptr",
)
_PTX_REG = (r"%[A-Za-z_][\w]*•?(?:\.[xyzw])?", Name.Variable)
_PTX_TYPE_RE = r"\.(?:" + "|".join(sorted(_PTX_TYPES, key=len, reverse=True)) + r")\b"


class PtxLexer(RegexLexer):
    """NVIDIA PTX as written by NVVM / the CuTe DSL."""

    name = "PTX"
    aliases = ["ptx"]
    filenames = ["*.ptx"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"/\*(.|\n)*?\*/", Comment.Multiline),
            (r"(\$?[A-Za-z_$][\w$]*)(:)", bygroups(Name.Label, Punctuation)),
            (
                r"(\.(?:entry|func))(\s+)(?:(\([^)]*\))(\s*))?([\w$.]+)",
                bygroups(Keyword.Declaration, Whitespace, Text, Whitespace, Name.Function),
            ),
            (_PTX_TYPE_RE, Keyword.Type),
            (words(tuple("." + d for d in _PTX_DIRECTIVES), suffix=r"\b"), Keyword.Declaration),
            (r"\.[A-Za-z_]\w*", Keyword.Declaration),
            (r"@!?%\w+", Name.Decorator),
            (r"[a-z][a-z0-9_]*(?=[.\s;])", Keyword, "instr"),
            _PTX_REG,
            (r"0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}", Number.Float),
            (r"-?0[xX][0-9a-fA-F]+U?", Number.Hex),
            (r"-?\d+\.\d+(?:[eE][+-]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r'"[^"]*"', String),
            (r"[\w$]+", Name),
            (r"[{}\[\]()<>,;:+\-|!=]", Punctuation),
            (r".", Text),
        ],
        "instr": [
            (_PTX_TYPE_RE, Keyword.Type),
            (r"\.[A-Za-z_0-9]+", Name.Attribute),
            default("operands"),
        ],
        "operands": [
            (r";", Punctuation, "#pop:2"),
            (r"\n", Whitespace, "#pop:2"),
            (r"[ \t]+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"\$[\w$]+", Name.Label),
            _PTX_REG,
            (r"0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}", Number.Float),
            (r"-?0[xX][0-9a-fA-F]+U?", Number.Hex),
            (r"-?\d+\.\d+(?:[eE][+-]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r'"[^"]*"', String),
            (r"[A-Za-z_][\w$]*", Name),
            (r"[!|\-+]", Operator),
            (r"[{}\[\](),<>:=]", Punctuation),
            (r".", Text),
        ],
    }


def lexer_for(language: str):
    """A lexer instance for ``sass``, ``ptx``, ``mlir``/``text`` (plain) or ``python``."""
    from pygments.lexers import get_lexer_by_name
    from pygments.lexers.special import TextLexer

    opts = dict(ensurenl=False, stripnl=False)
    if language == "sass":
        return SassLexer(**opts)
    if language == "ptx":
        return PtxLexer(**opts)
    if language == "mlir":
        try:
            return get_lexer_by_name("mlir", **opts)
        except Exception:  # pygments without an MLIR lexer
            return TextLexer(**opts)
    if language == "python":
        return get_lexer_by_name("python", **opts)
    return TextLexer(**opts)
