"""A standalone chart page that works offline in well under half of plotly's own size.

plotly's standalone page embeds plotly.js as text (4.8 MB in plotly 6+). This one embeds it and
the figure gzipped (1.5 MB and ~0.4 MB for six years of hourly candles), one byte of the page to
a byte of the gzip (the page is read as windows-1252, where every byte is one character; base64
would add a third), and the browser unpacks them with its own ``DecompressionStream`` (Chrome 80,
Firefox 113, Safari 16.4 on), with no network. Time axes are written as Unix milliseconds in
plotly's binary arrays on axes typed ``date``, so the chart reads as before.

Example:
    >>> gzip.decompress(unpack8(pack8(gzip.compress(b"<plotly>")))).decode()
    '<plotly>'
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np

#: Bytes the HTML parser would not hand back as they are inside a raw-text element: NUL
#: (replaced), CR (turned into LF), ``<`` (could close the element) and ESCAPE itself. Each is
#: written as ESCAPE followed by ``A`` + its index here.
ESCAPE = 1
AWKWARD = (0, ESCAPE, 13, 60)

#: What windows-1252 decodes the bytes 0x80..0x9F to (the WHATWG index): the page is read as
#: windows-1252 so that each byte is one character and the decoder maps characters back to bytes.
_CP1252_HIGH = [ord(bytes([b]).decode("cp1252", errors="ignore") or chr(b)) for b in range(0x80, 0xA0)]

_DECODER = """
(function () {
  var high = [%(high)s], back = {};
  for (var b = 0; b < 32; b++) back[high[b]] = 0x80 + b;
  function unpack(id) {
    var el = document.getElementById(id), s = el.textContent, out = new Uint8Array(+el.dataset.bytes);
    for (var i = 0, o = 0; i < s.length && o < out.length; i++) {
      var c = s.charCodeAt(i);
      if (c >= 0x80 && c < 0xa0 || c > 0xff) c = back[c];
      if (c === %(escape)d) c = [%(awkward)s][s.charCodeAt(++i) - 65];
      out[o++] = c;
    }
    var stream = new Blob([out]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }
  var target = document.getElementById("svc-chart");
  if (typeof DecompressionStream === "undefined") {
    target.textContent = "This page needs a browser with DecompressionStream"
      + " (Chrome 80, Firefox 113, Safari 16.4 or later).";
    return;
  }
  Promise.all([unpack("svc-plotlyjs"), unpack("svc-figure")]).then(function (parts) {
    var script = document.createElement("script");
    script.textContent = parts[0];
    document.head.appendChild(script);
    var fig = JSON.parse(parts[1]);
    return Plotly.newPlot(target, fig.data, fig.layout, {responsive: true});
  }).then(function () { document.body.setAttribute("data-rendered", "1"); }, function (e) {
    target.textContent = "Could not draw the chart: " + e;
    document.body.setAttribute("data-error", String(e));
  });
})();
"""


def pack8(data: bytes) -> bytes:
    """``data`` as bytes that a windows-1252 page carries unchanged inside a raw-text element.

    Example:
        >>> pack8(bytes([0, 7, 60, 1]))
        b'\\x01A\\x07\\x01D\\x01B'
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    awkward = np.isin(raw, AWKWARD)
    out = np.empty(raw.shape[0] + int(awkward.sum()), dtype=np.uint8)
    at = np.arange(raw.shape[0]) + np.concatenate([[0], np.cumsum(awkward)[:-1]])
    out[at] = np.where(awkward, ESCAPE, raw)
    codes = np.searchsorted(np.array(AWKWARD), raw[awkward]) + ord("A")
    out[at[awkward] + 1] = codes
    return out.tobytes()


def unpack8(text: bytes) -> bytes:
    """The bytes :func:`pack8` packed.

    Example:
        >>> unpack8(pack8(bytes(range(256)))) == bytes(range(256))
        True
    """
    out, i = bytearray(), 0
    while i < len(text):
        b = text[i]
        if b == ESCAPE:
            i += 1
            b = AWKWARD[text[i] - ord("A")]
        out.append(b)
        i += 1
    return bytes(out)


def _ms_times(fig_dict: dict[str, Any]) -> bool:
    # datetime arrays would be written as 27-byte strings; as float ms they go in binary arrays
    dated = False
    for trace in fig_dict.get("data", []):
        for key in ("x", "base"):
            value = trace.get(key)
            if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.datetime64):
                trace[key] = value.astype("datetime64[ms]").astype("int64").astype("float64")
                trace.setdefault("xhoverformat", "%Y-%m-%d %H:%M")
                dated = True
    return dated


def write_page(fig: Any, path: Path) -> None:
    """Write ``fig`` to ``path`` as one offline HTML page (see the module's words)."""
    import plotly
    import plotly.io.json as pio_json
    from _plotly_utils.utils import convert_to_base64

    fig_dict = fig.to_dict()
    layout = fig_dict.setdefault("layout", {})
    if _ms_times(fig_dict):  # numbers on an axis typed date are read as Unix ms
        for key in [k for k in layout if k.startswith("xaxis")] or ["xaxis"]:
            layout.setdefault(key, {}).setdefault("type", "date")
    convert_to_base64(fig_dict)  # plotly's binary arrays, as its own to_dict() does
    # ASCII only, so that reading the page as windows-1252 changes none of its characters
    figure = json.dumps(json.loads(pio_json.to_json_plotly(fig_dict)), separators=(",", ":"))
    script = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()
    blobs = {
        "svc-plotlyjs": gzip.compress(script, 9, mtime=0),
        "svc-figure": gzip.compress(figure.encode(), 9, mtime=0),
    }
    decoder = _DECODER % {
        "high": ", ".join(map(str, _CP1252_HIGH)),
        "escape": ESCAPE,
        "awkward": ", ".join(map(str, AWKWARD)),
    }
    parts = [
        b'<!doctype html>\n<html><head><meta charset="windows-1252"><title>',
        _title(layout).encode("ascii", "xmlcharrefreplace"),
        b'</title></head><body style="margin:0"><div id="svc-chart" style="width:100%%;height:%dpx"></div>'
        % int(layout.get("height") or 600),
    ]
    for name, blob in blobs.items():
        parts += [
            b'<script type="application/x-svc-gzip" id="%s" data-bytes="%d">' % (name.encode(), len(blob)),
            pack8(blob),
            b"</script>",
        ]
    parts += [b"<script>", decoder.encode("ascii"), b"</script></body></html>\n"]
    path.write_bytes(b"".join(parts))


def _title(layout: dict[str, Any]) -> str:
    import html

    title = layout.get("title") or {}
    text = title.get("text", "") if isinstance(title, dict) else str(title)
    return html.escape(text.split("<br>")[0]) or "chart"


def page_json(path: Path) -> dict[str, Any]:
    """The figure a page from :func:`write_page` carries, as plotly's JSON (for checks).

    Example:
        >>> page_json.__name__
        'page_json'
    """
    text = path.read_bytes()
    start = text.index(b'id="svc-figure"')
    start = text.index(b">", start) + 1
    return json.loads(gzip.decompress(unpack8(text[start : text.index(b"</script>", start)])))
