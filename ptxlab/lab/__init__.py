"""The staged bring-up lab: stage registry and CLI (``python lab.py``)."""
from ptxlab.lab.registry import Check, Stage, StageContext, StageResult

__all__ = ["Check", "Stage", "StageContext", "StageResult"]
