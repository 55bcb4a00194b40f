"""Print README's two commands (its first ```bash block), so that .ci/run runs exactly what a newcomer types.

Exits non-zero unless that block holds exactly two command lines: README and CI can never drift apart silently.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

readme = Path(__file__).resolve().parent.parent / "README.md"
block = re.search(r"^```bash\n(.*?)^```", readme.read_text(encoding="utf-8"), re.S | re.M)
lines = [line for line in block.group(1).splitlines() if line.strip()] if block else []
if len(lines) != 2:
    sys.exit(f"{readme}: the first ```bash block must hold README's two commands, found {len(lines)} lines")
print("\n".join(lines))
