"""`make site`: the course website in build/site/, built offline with Sphinx + MyST-NB.

Assembles build/site-src/ from the repository (never writes into it):
  notebooks/*.ipynb, exercises/*.ipynb  the notebooks of tools/build_ipynb.py (with their setup cell,
                                        hidden on the page), each with a line of links: Colab,
                                        Binder, download
  instructors.md, index.md, conf.py     from docs/ and docs/site/
  catalog.md, models.md                 generated here from course_lib.hardware / course_lib.economics
                                        (every entry, every stored field with its unit, its source)
  _static/mathjax/                      MathJax from the npm package (MATHJAX_DIR, vendored at build time)
  _extra/ipynb/                         the notebooks themselves, served for download
then runs sphinx-build. `make site` then checks the result with tools/check_site.py. Lessons are executed during the build; exercises are not (their stubs raise).

    python tools/build_site.py --mathjax build/vendor/node_modules/mathjax [--repo OWNER/REPO]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_ipynb  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

LINKS = ('<p class="course-links">'
         '<a href="https://colab.research.google.com/github/{repo}/blob/{nb_branch}/{folder}/{stem}.ipynb">Open in Colab</a> · '
         '<a href="https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=lab/tree/{folder}/{stem}.py">Binder</a> · '
         '<a href="../ipynb/{folder}/{stem}.ipynb" download>Download .ipynb</a> · '
         'the explorers (widgets) are interactive there or in JupyterLab (<code>make lab</code>).</p>')

# ------------------------------------------------------------------------------ data pages

# The unit of every field the data files store (the files put units in key names; this spells them
# out). A field missing here stops the build: a new field must be given its unit, never shown bare.
NO_UNIT = "—"
ACCELERATOR_UNITS = {
    "name": NO_UNIT, "aliases": NO_UNIT, "vendor": NO_UNIT, "architecture": NO_UNIT, "kind": NO_UNIT,
    "year": "year", "compute_capability": NO_UNIT, "compute_unit": NO_UNIT,
    "sm_count": "{compute_unit}s", "boost_clock_mhz": "MHz",
    "fp32_flops_per_clock_per_sm": "FLOP per clock per {compute_unit}",
    "fp16_tensor_flops_per_clock_per_sm": "FLOP per clock per {compute_unit} (dense)",
    "mem_type": NO_UNIT, "mem_capacity_gb": "GB", "mem_bandwidth_gb_per_s": "GB/s",
    "mem_bus_width_bits": "bits", "mem_data_rate_gbit_per_s_per_pin": "Gbit/s per pin", "l2_cache_mib": "MiB", "l2_read_bytes_per_clock": "bytes per clock",
    "register_file_kib_per_sm": "KiB per {compute_unit}", "shared_mem_kib_per_sm": "KiB per {compute_unit}",
    "max_shared_mem_kib_per_block": "KiB per block", "shared_mem_reserved_kib_per_block": "KiB per block",
    "max_threads_per_sm": "threads per {compute_unit}", "max_warps_per_sm": "warps per {compute_unit}",
    "max_blocks_per_sm": "blocks per {compute_unit}", "max_threads_per_block": "threads per block",
    "max_registers_per_thread": "32-bit registers per thread", "register_alloc_unit": "registers",
    "warp_alloc_granularity": "warps", "shared_mem_alloc_unit_bytes": "bytes", "warp_size": "threads",
    "fp8_formats": NO_UNIT, "interconnect": NO_UNIT,
    "interconnect_gb_per_s": "GB/s (total, both directions)", "host_link": NO_UNIT,
    "host_link_gb_per_s": "GB/s", "tdp_w": "W", "source": NO_UNIT, "notes": NO_UNIT,
}
MODEL_UNITS = {
    "name": NO_UNIT, "aliases": NO_UNIT, "layers": "layers", "hidden_size": "elements",
    "heads": "query heads", "kv_heads": "key/value heads", "head_dim": "elements", "ffn_size": "elements",
    "ffn_matrices": "matrices per feed-forward block", "vocab_size": "tokens", "tied_embeddings": NO_UNIT,
    "norm_vectors_per_layer": "vectors of hidden_size", "final_norm_vectors": "vectors of hidden_size",
    "context_length_tokens": "tokens", "sliding_window_tokens": "tokens",
    "rope_buffer_values_per_layer": "values", "params_counted": "parameters",
    "params_counted_source": NO_UNIT, "training_tokens": "tokens", "training_device": NO_UNIT,
    "training_device_hours": "device-hours", "source": NO_UNIT, "notes": NO_UNIT,
}
# Shown above each entry's table, not in it.
_PROSE = ("name", "source", "notes")


def _cell(value, key: str = "") -> str:
    if key == "year":
        return str(value)
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, (int, float)) and abs(value) >= 1e12:      # 15e12 tokens: 1.5 × 10^13
        mantissa, exponent = f"{value:.6e}".split("e")
        text = f"{float(mantissa):g} × 10<sup>{int(exponent)}</sup>"
    elif isinstance(value, (int, float)):
        text = f"{value:,}".replace(",", "\u2009")     # as stored, thin-space groups: 7 241 732 096
        text = text.removesuffix(".0") if isinstance(value, float) else text
    elif isinstance(value, (list, tuple)):
        text = ", ".join(str(v) for v in value) or NO_UNIT
    else:
        text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _unit(units: dict, key: str, entry: dict, what: str) -> str:
    if key not in units:
        raise SystemExit(f"build_site: {what} field {key!r} has no unit in tools/build_site.py; add it")
    return units[key].format(compute_unit=entry.get("compute_unit", "SM"))


def _entry_section(entry: dict, units: dict, what: str, anchor: str, rows_extra=()) -> list[str]:
    lines = [f"({anchor})=", f"## {entry['name']}", ""]
    lines += [f"**Source:** {_cell(entry['source'])}", ""]
    if entry.get("notes"):
        lines += [f"**Notes:** {_cell(entry['notes'])}", ""]
    lines += ["| Field | Value | Unit |", "|---|---:|---|"]
    for key, value in entry.items():
        if key in _PROSE:
            _unit(units, key, entry, what)
            continue
        if isinstance(value, dict):
            for sub_key, sub_value, unit in rows_extra(key, value):
                lines.append(f"| `{key}.{sub_key}` | {_cell(sub_value)} | {unit} |")
            continue
        lines.append(f"| `{key}` | {_cell(value, key)} | {_unit(units, key, entry, what)} |")
    return lines + [""]


def _peak_rows(key, value):
    if key != "peak_tflops":
        raise SystemExit(f"build_site: accelerator table field {key!r} has no unit in tools/build_site.py")
    for precision, rate in value.items():
        unit = "TOP/s (dense)" if precision.startswith("int") else "TFLOP/s (dense)"
        yield precision, rate, unit


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")


def catalog_page() -> str:
    from course_lib.hardware import get_accelerator, list_accelerators

    entries = [dict(get_accelerator(name).raw) for name in list_accelerators()]
    lines = ["# Accelerator catalog", "",
             "Every accelerator in the course's catalog (`course_lib/data/accelerators.toml`, read through "
             "`course_lib.hardware`), every stored field with its unit, and the primary source each "
             "entry was checked against. Rates are dense (no 2:4 sparsity); fields a vendor does not "
             "publish are absent, never guessed. This page is generated when the site is built.", "",
             "| Accelerator | Vendor | Architecture | Year | bf16 TFLOP/s | Memory GB | Memory GB/s |",
             "|---|---|---|---:|---:|---:|---:|"]
    for e in entries:
        bf16 = e.get("peak_tflops", {}).get("bf16", NO_UNIT)
        lines.append(f"| [{e['name']}](#acc-{_slug(e['name'])}) | {e['vendor']} | {e['architecture']} | "
                     f"{e['year']} | {_cell(bf16)} | {_cell(e['mem_capacity_gb'])} | "
                     f"{_cell(e['mem_bandwidth_gb_per_s'])} |")
    lines.append("")
    for e in entries:
        lines += _entry_section(e, ACCELERATOR_UNITS, "accelerator", f"acc-{_slug(e['name'])}", _peak_rows)
    return "\n".join(lines)


def models_page() -> str:
    from course_lib.economics import get_model, list_models

    def no_tables(key, _value):
        raise SystemExit(f"build_site: model field {key!r} is a table; give it a unit in tools/build_site.py")

    models = [get_model(name) for name in list_models()]
    lines = ["# Models", "",
             "The open model configurations lesson 07 uses (`course_lib/data/models.toml`, read through "
             "`course_lib.economics`): every stored field with its unit, and its source. This page is "
             "generated when the site is built.", "",
             "| Model | Layers | Hidden size | Heads (KV) | Attention | Parameters |",
             "|---|---:|---:|---:|---|---:|"]
    for m in models:
        params = m.raw.get("params_counted", NO_UNIT)
        lines.append(f"| [{m.name}](#model-{_slug(m.name)}) | {m.layers} | {_cell(m.hidden_size)} | "
                     f"{m.heads} ({m.kv_heads}) | {m.attention} | {_cell(params)} |")
    lines.append("")
    for m in models:
        lines += _entry_section(dict(m.raw), MODEL_UNITS, "model", f"model-{_slug(m.name)}", no_tables)
    return "\n".join(lines)


def assemble(src: Path, repo: str, branch: str, nb_branch: str, mathjax: Path) -> None:
    if src.exists():
        shutil.rmtree(src)
    (src / "_static").mkdir(parents=True)
    notebooks = build_ipynb.build(src, build_ipynb.default_spec(repo))
    shutil.copytree(src / "notebooks", src / "_extra" / "ipynb" / "notebooks")
    shutil.copytree(src / "exercises", src / "_extra" / "ipynb" / "exercises")
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        links = LINKS.format(repo=repo, branch=branch, nb_branch=nb_branch, folder=path.parent.name, stem=path.stem)
        # After the setup cell and the title cell: the title stays the page's first heading.
        nb.cells.insert(2, nbformat.v4.new_markdown_cell(links))
        nbformat.write(nb, path)
    shutil.copy(ROOT / "docs" / "instructors.md", src / "instructors.md")
    for name in ("conf.py", "index.md"):
        shutil.copy(ROOT / "docs" / "site" / name, src / name)
    (src / "catalog.md").write_text(catalog_page(), encoding="utf-8")
    (src / "models.md").write_text(models_page(), encoding="utf-8")
    if not (mathjax / "es5" / "tex-mml-chtml.js").is_file():
        raise SystemExit(f"MathJax not found under {mathjax}: run `make site` (it installs the npm package)")
    shutil.copytree(mathjax / "es5", src / "_static" / "mathjax")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "build" / "site-src")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site")
    parser.add_argument("--mathjax", type=Path, default=ROOT / "build" / "vendor" / "node_modules" / "mathjax")
    parser.add_argument("--repo", default=os.environ.get("REPO", "OWNER/REPO"))
    parser.add_argument("--branch", default="main")
    parser.add_argument("--nb-branch", default="ipynb", help="branch the Pages workflow pushes the .ipynb to")
    parser.add_argument("-j", default="2")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    assemble(args.src, args.repo, args.branch, args.nb_branch, args.mathjax)
    env = dict(os.environ, COURSE_REPO=args.repo)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-j", args.j, "-E", str(args.src), str(args.out)]
    result = subprocess.run(cmd, env=env)
    print(f"site: {args.out} in {time.perf_counter() - start:.0f} s (exit {result.returncode})")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
