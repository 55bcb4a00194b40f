"""Analyses over tournaments and agents: claims (``claims_report``), the policy observer (``policy_observer``),
ISMCTS insertion (``ismcts``), seat balance (``balance``) and cross-play of learned policies (``crossplay``)."""
