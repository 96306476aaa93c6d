"""Hyperparameters of a GP by maximising its log marginal likelihood with Adam."""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch

from fmu_surrogate.errors import NumericalError

__all__ = ["maximise_mll"]


def maximise_mll(
    model: torch.nn.Module, X: torch.Tensor, Y: torch.Tensor, n_iter: int, lr: float,
    progress: bool,
) -> dict:
    """Maximise ``model.mll(X, Y)`` with Adam on the model's parameters; keep the best seen.

    Adam's last iterate can be slightly worse than an earlier one, so the model ends with the
    parameters of the best marginal likelihood seen (including the one after the last step).

    Parameters
    ----------
    model : torch.nn.Module
        A GP with ``mll(X, Y)`` (the log marginal likelihood, differentiable).
    X, Y : torch.Tensor
        Training inputs and targets.
    n_iter : int
        Adam steps.
    lr : float
        Learning rate.
    progress : bool
        Show a tqdm progress bar.

    Returns
    -------
    dict
        ``loss`` (negative log marginal likelihood per step, NaN after an early stop), ``best``
        (the best log marginal likelihood), ``steps`` (steps taken) and ``reason`` (why it
        stopped).

    Raises
    ------
    FloatingPointError
        The marginal likelihood is not finite at the initial hyperparameters.
    """
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    best = -math.inf
    best_state = None
    reason = "max_iter reached"
    steps = 0
    losses = np.full(n_iter, np.nan)
    it = range(n_iter)
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc="GP marginal likelihood", leave=False)
    for k in it:
        opt.zero_grad()
        mll = model.mll(X, Y)
        val = float(mll.detach())
        if not math.isfinite(val):
            reason = f"non-finite marginal likelihood at Adam step {k}"
            if best_state is None:
                raise NumericalError(
                    "the marginal likelihood is not finite at the initial hyperparameters; check "
                    "the data for duplicated/extreme values or pass init_lengthscale."
                )
            warnings.warn(f"{reason}; stopping early.", RuntimeWarning, stacklevel=3)
            break
        steps = k + 1
        losses[k] = -val
        if val > best:
            best = val
            best_state = {kk: v.detach().clone() for kk, v in model.state_dict().items()}
        (-mll / Y.numel()).backward()
        opt.step()
    with torch.no_grad():
        val = float(model.mll(X, Y))
    if math.isfinite(val) and val > best:
        best = val
    elif best_state is not None:
        model.load_state_dict(best_state)
    return {"loss": losses, "best": best, "steps": steps, "reason": reason}
