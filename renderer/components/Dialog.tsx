import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { toast } from '../lib/toast.ts';
import { Button } from './Button.tsx';

export interface DialogProps {
  open: boolean;
  title: string;
  onClose(): void;
  children: ReactNode;
  footer?: ReactNode;
  wide?: boolean;
}

/** A modal on the native <dialog> element: focus is trapped, Escape closes, focus returns after. */
export function Dialog({ open, title, onClose, children, footer, wide }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className={`dialog${wide ? ' dialog-wide' : ''}`}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      {open ? (
        <>
          <header className="dialog-header">
            <h2 id={titleId}>{title}</h2>
            <button type="button" className="icon-btn" aria-label="Close" onClick={onClose}>
              ×
            </button>
          </header>
          <div className="dialog-body">{children}</div>
          {footer ? <footer className="dialog-footer">{footer}</footer> : null}
        </>
      ) : null}
    </dialog>
  );
}

export interface ConfirmProps {
  open: boolean;
  title: string;
  message: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  onConfirm(): Promise<void> | void;
  onClose(): void;
}

export function ConfirmDialog({ open, title, message, confirmLabel, danger, onConfirm, onClose }: ConfirmProps) {
  const [busy, setBusy] = useState(false);
  return (
    <Dialog
      open={open}
      title={title}
      onClose={onClose}
      footer={
        <>
          <Button onClick={onClose} disabled={busy}>
            Cancel
          </Button>
          <Button
            variant={danger ? 'danger' : 'primary'}
            busy={busy}
            onClick={async () => {
              setBusy(true);
              try {
                await onConfirm();
              } finally {
                setBusy(false);
              }
            }}
          >
            {confirmLabel}
          </Button>
        </>
      }
    >
      <div className="confirm-message">{message}</div>
    </Dialog>
  );
}

export interface ConfirmActionProps<T> {
  /** What the action applies to; the dialog is open while it is set. */
  target: T | null;
  title(target: T): string;
  message(target: T): ReactNode;
  confirmLabel: string;
  danger?: boolean;
  /** The call to make. On success `success` is toasted and `onDone` runs; a failure is toasted. Either way the dialog closes. */
  action(target: T): Promise<unknown>;
  success(target: T): string;
  onDone?(target: T): void;
  onClose(): void;
}

/** A ConfirmDialog for the common "confirm, call, toast, refresh" flow on one item (delete, revoke…). */
export function ConfirmAction<T>({ target, title, message, confirmLabel, danger, action, success, onDone, onClose }: ConfirmActionProps<T>) {
  return (
    <ConfirmDialog
      open={target !== null}
      title={target === null ? '' : title(target)}
      message={target === null ? '' : message(target)}
      confirmLabel={confirmLabel}
      {...(danger ? { danger } : {})}
      onClose={onClose}
      onConfirm={async () => {
        if (target === null) return;
        try {
          await action(target);
          toast.success(success(target));
          onDone?.(target);
        } catch (err) {
          toast.fromError(err);
        }
        onClose();
      }}
    />
  );
}
