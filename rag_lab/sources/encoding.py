"""Text in UTF-16 or UTF-32 (Windows' "Unicode"), told from binary: the folder reader asks
it to name what a file is when it is not UTF-8 (:func:`wide_encoding`)."""

from __future__ import annotations

_BOMS = (  # UTF-32's first: its little-endian mark begins with UTF-16's
    (b"\xff\xfe\x00\x00", "utf-32", "UTF-32 text (little-endian, with a byte-order mark)"),
    (b"\x00\x00\xfe\xff", "utf-32", "UTF-32 text (big-endian, with a byte-order mark)"),
    (b"\xff\xfe", "utf-16", "UTF-16 text (little-endian, with a byte-order mark)"),
    (b"\xfe\xff", "utf-16", "UTF-16 text (big-endian, with a byte-order mark)"),
)


def wide_encoding(data: bytes) -> str | None:
    """What ``data`` is, if it is text in UTF-16 or UTF-32 (Windows' "Unicode"), not binary: it
    decodes so, and says so by its byte-order mark or, without one, by a NUL in every other
    byte of its start and in none of the others (ASCII text in UTF-16)."""
    for mark, codec, what in _BOMS:
        if data.startswith(mark):
            return what if len(data) > len(mark) and _decodes(data, codec) else None
    start = data[:4096]
    for parity, codec, order in ((1, "utf-16-le", "little"), (0, "utf-16-be", "big")):
        zeros, others = start[parity::2], start[1 - parity :: 2]
        looks = len(start) >= 4 and zeros.count(0) * 2 >= len(zeros) and 0 not in others
        if looks and _decodes(data, codec):
            return f"UTF-16 text ({order}-endian, without a byte-order mark)"
    return None


def _decodes(data: bytes, codec: str) -> bool:
    try:
        data.decode(codec)
    except UnicodeDecodeError:
        return False
    return True
