"""Prediction, scores and figures of a fitted :class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier`."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fmu_surrogate.errors import InvalidInputError, InvalidTypeError
from fmu_surrogate.identify.linear.data import _validate_triplet
from fmu_surrogate.identify.linear.model.experiments import check_signal, check_time
from fmu_surrogate.identify.linear.report import OutputErrors, output_errors
from fmu_surrogate.ph import LinearPH

Array = NDArray[np.float64]
_MODES = ("exact", "euler")


def _simulate(*args: Any, **kw: Any) -> Any:
    from fmu_surrogate.identify.linear.model.discretisation import simulate

    return simulate(*args, **kw)


class LinearPHPredictions:
    """The methods of a fitted linear pH identifier that use its result (mixed into
    :class:`~fmu_surrogate.identify.linear.estimator.LinearPHIdentifier`)."""

    system_: LinearPH
    x0_: Array
    n_inputs_: int

    # -- prediction ---------------------------------------------------------------------------
    def to_surrogate(self) -> Any:
        """The fitted surrogate.

        Returns
        -------
        PortedSystem or LinearPH
            After :meth:`fit_dataset`: the drop-in :class:`~fmu_surrogate.ph.PortedSystem` (the
            FMU's variable names, units and signs, the operating point ``x0_``, constant
            sources, measured outputs); after :meth:`fit`: the pH core (:class:`LinearPH`, in
            pH port convention).
        """
        self._check_fitted()
        names = getattr(self, "names_", None)
        if names is None:
            return self.system_
        from fmu_surrogate.identify.linear.ported_fit import ported_surrogate

        return ported_surrogate(self, *names)

    def fitted_params(self) -> dict[str, Array]:
        """The fitted parameters as a dict ``{J, R, Q, B, x0}`` (copies).

        Returns
        -------
        dict of str to ndarray
        """
        self._check_fitted()
        s = self.system_
        return {"J": s.J.copy(), "R": s.R.copy(), "Q": s.Q.copy(), "B": s.B.copy(),
                "x0": self.x0_.copy()}

    def predict(
        self,
        t: ArrayLike,
        u: ArrayLike,
        x0: ArrayLike | None = None,
        mode: str | None = None,
        hold: str | None = None,
    ) -> Array:
        """Output of the fitted system for input ``u`` on grid ``t``.

        Parameters
        ----------
        t : array_like, shape (K,)
        u : array_like, shape (K, m) or (K,) for m = 1
        x0 : array_like, shape (n,), optional
            Initial state (default: the fitted/fixed ``x0_``).
        mode : {"exact", "euler"}, optional
            Discretisation (default: the one used for fitting, so that the training error is
            what the optimiser saw; ``"exact"`` gives the continuous-time model's response).
        hold : {"linear", "zoh"}, optional
            Input between samples (default: that of the training data, ``hold_``).

        Returns
        -------
        ndarray, shape (K, m)
        """
        self._check_fitted()
        tt = check_time(t, where="predict")
        uu = check_signal(u, tt.size, "u", where="predict")
        if uu.shape[1] != self.n_inputs_:
            raise InvalidInputError(
                f"predict: u must have {self.n_inputs_} columns, got {uu.shape[1]}.")
        offsets = getattr(self, "input_offsets_", None)  # held inputs (fit_dataset)
        if offsets is not None:
            uu = uu - offsets
        mode = self.mode if mode is None else mode
        if mode not in _MODES:
            raise InvalidInputError(f"mode must be one of {_MODES}, got {mode!r}.")
        hold = getattr(self, "hold_", "linear") if hold is None else hold
        if getattr(self, "theta_", None) is not None:  # the drop-in model
            from fmu_surrogate.identify.linear.ported_fit import predict_ported

            x0v = None if x0 is None else np.asarray(x0, dtype=float).reshape(-1)
            return predict_ported(self, tt, uu, x0v, hold)
        p = self.fitted_params()
        signs = getattr(self, "port_signs_", None)
        if signs is not None:  # external convention -> pH ports (power out: u_ph = −u)
            uu = uu * signs
        if x0 is not None:
            p["x0"] = self._matrix(x0, (self.system_.n_states,), "x0", "predict")
        _, y = _simulate(p, tt, uu, mode=mode, hold=hold)
        return np.asarray(y)

    def errors(
        self, t: ArrayLike, u: ArrayLike, y: ArrayLike, x0: ArrayLike | None = None,
        mode: str | None = None, hold: str | None = None,
    ) -> OutputErrors:
        """Relative max and RMS output errors of :meth:`predict` against ``y``.

        Parameters
        ----------
        t : array_like, shape (K,)
            Time grid [s].
        u, y : array_like, shape (K, m)
            Inputs and measured outputs (e.g. held-out data).
        x0, mode, hold
            As in :meth:`predict`.

        Returns
        -------
        OutputErrors
            ``relative_max``: the worst output's ``max |ŷ − y|`` relative to its swing
            (:func:`~fmu_surrogate.fmu.dataset.relative_errors`), ``relative_rms = ‖ŷ − y‖ / ‖y‖``.
        """
        tt, uu, yy = _validate_triplet(t, u, y, "errors")
        return output_errors(yy, self.predict(tt, uu, x0=x0, mode=mode, hold=hold))

    def score(
        self,
        t: ArrayLike,
        u: ArrayLike,
        y: ArrayLike,
        x0: ArrayLike | None = None,
        mode: str | None = None,
        metric: str = "r2",
    ) -> float:
        """Accuracy of :meth:`predict` on ``(t, u, y)``.

        Parameters
        ----------
        t : array_like, shape (K,)
            Time grid [s].
        u, y : array_like, shape (K, m)
            Inputs and measured outputs.
        x0 : array_like, shape (n,), optional
            Initial state (default: the fitted one).
        mode : {"exact", "euler"}, optional
            Discretisation (default: the estimator's).
        metric : {"r2", "relative_max", "relative_rms"}
            ``"r2"`` (default; scikit-learn's convention, larger is better): coefficient of
            determination averaged over the outputs; ``"relative_max"``, ``"relative_rms"``: the
            errors of :meth:`errors` (smaller is better).

        Returns
        -------
        float
        """
        tt, uu, yy = _validate_triplet(t, u, y, "score")
        yp = self.predict(tt, uu, x0=x0, mode=mode)
        if metric in ("relative_max", "relative_rms"):
            return float(getattr(output_errors(yy, yp), metric))
        if metric != "r2":
            raise InvalidInputError(
                f"metric must be 'r2', 'relative_max' or 'relative_rms', got {metric!r}."
            )
        ss_res = np.sum((yy - yp) ** 2, axis=0)
        ss_tot = np.sum((yy - yy.mean(axis=0)) ** 2, axis=0)
        r2 = np.where(
            ss_tot > 0,
            1.0 - ss_res / np.where(ss_tot > 0, ss_tot, 1.0),
            np.where(ss_res == 0, 1.0, 0.0),
        )
        return float(np.mean(r2))

    # -- figures --------------------------------------------------------------------------------
    def plot(
        self, t: ArrayLike | None = None, u: ArrayLike | None = None, y: ArrayLike | None = None,
        *, path: Any = None,
    ) -> Any:
        """Fit report figure: cost and gradient history; with data, output vs prediction.

        Parameters
        ----------
        t, u, y : array_like, optional
            Data to compare the prediction with (e.g. a held-out experiment).
        path : path, optional
            Save the figure there (PNG) and close it.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from fmu_surrogate.identify.linear.report import plot_fit

        self._check_fitted()
        data = None
        if t is not None:
            if u is None or y is None:
                raise InvalidTypeError("plot(t, u, y) needs the inputs and the outputs.")
            tt, uu, yy = _validate_triplet(t, u, y, "plot")
            data = (tt, yy, self.predict(tt, uu))
        return plot_fit(self.result_, data, path=path)

    def plot_order_selection(self, *, path: Any = None) -> Any:
        """Singular values of the subspace method (choose the order at the gap).

        Parameters
        ----------
        path : path, optional
            Save the figure there (PNG) and close it.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from fmu_surrogate.identify.linear.report import plot_singular_values

        self._check_fitted()
        if getattr(self, "subspace_", None) is None:
            raise InvalidInputError(
                "plot_order_selection() needs a fit with init='subspace' (this fit used "
                f"{self.result_.init!r})."
            )
        return plot_singular_values(self.subspace_.subspace, self.system_.n_states, path=path)
