"""What every answer says of the parameters it planned (the server's
ModelReport): their total, and, for a request that names its model, the
model and the warnings of its description (config keys ignored that look
like known ones)."""

import dataclasses
from typing import Optional, Tuple


@dataclasses.dataclass(frozen=True)
class ModelReport:
    """The server's ModelReport. model_type and architecture are "" for a
    request of numels; warnings name an ignored config key and the known
    key it resembles (that key took its default)."""
    total_param_size: int
    model_type: str = ""
    architecture: str = ""
    warnings: Tuple[str, ...] = ()

    @classmethod
    def from_response(cls, report):
        """The ModelReport of a chunkplan.v1.ModelReport message."""
        return cls(total_param_size=int(report.total_param_size),
                   model_type=report.model_type,
                   architecture=report.architecture,
                   warnings=tuple(report.warnings))


def of(response) -> Optional[ModelReport]:
    """The ModelReport of a response message that has the field set, else
    None (a server older than the field)."""
    if not response.HasField("model_report"):
        return None
    return ModelReport.from_response(response.model_report)
