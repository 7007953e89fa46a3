"""attnproof's command line and reports: run every theorem, write results JSON and Markdown.

Importing this package imports neither JAX nor MLX; numeric checks run in worker processes.
"""

from ._results import Report as Report
from ._results import TheoremResult as TheoremResult
from ._results import read_json as read_json
from ._results import verdict as verdict
from ._results import write_json as write_json
from ._runner import run as run
