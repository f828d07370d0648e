"""Typed errors of the Slurm adapter.

Each error is one clear sentence for a person and carries ``retryable`` for
the machinery: the activity boundary turns a non-retryable error into a
non-retryable ``ApplicationError`` whose ``type`` is the class name, so a
workflow can match on it and Temporal stops retrying something that can only
fail again (an unknown job id, a refused operation). Retryable errors are the
transient ones: the controller is down, a command timed out, the SSH
connection dropped, or an action's verification has not converged yet.
"""

from __future__ import annotations

from lazarus.errors import LazarusError


class SlurmError(LazarusError):
    """Base class of every error the Slurm adapter raises."""

    retryable: bool = False


class InvalidArgumentError(SlurmError):
    """An argument would have reached a Slurm command line but is not valid (rejected before any command runs)."""


class UnknownJobError(SlurmError):
    """Slurm does not know the job id (never existed, or purged after MinJobAge)."""


class UnknownNodeError(InvalidArgumentError):
    """A node name that is valid syntax but not a node of this cluster."""


class UnknownReservationError(InvalidArgumentError):
    """A reservation name that Slurm does not know."""


class PermissionDeniedError(SlurmError):
    """The user the commands run as may not perform this operation."""


class OperationRefusedError(SlurmError):
    """Slurm refused the operation for this job or node in its current state (e.g. a --no-requeue job)."""


class MalformedOutputError(SlurmError):
    """A Slurm command printed something the parser does not understand."""


class CommandNotFoundError(SlurmError):
    """The Slurm client command is not installed (or not on PATH) where the transport runs it."""


class HostKeyError(SlurmError):
    """The SSH server's host key is unknown or does not match known_hosts: never trusted automatically."""


class AuthenticationError(SlurmError):
    """The SSH server refused our credentials."""


class ControllerUnreachableError(SlurmError):
    """slurmctld did not answer (stopped, restarting, network): retry later."""

    retryable = True


class CommandTimeoutError(SlurmError):
    """A Slurm command ran past its time limit and was killed."""

    retryable = True


class TransportError(SlurmError):
    """The transport failed (SSH connection refused or lost) before or while running a command."""

    retryable = True


class CommandFailedError(SlurmError):
    """A Slurm command failed in a way not recognised as one of the typed cases; retried in case it is transient."""

    retryable = True


class VerificationError(SlurmError):
    """An action ran, but the fresh state read afterwards does not (yet) show the intended result."""

    retryable = True
