import { type ReactNode, useId } from 'react';

export function PageHeader({ title, description, actions, back }: { title: ReactNode; description?: ReactNode; actions?: ReactNode; back?: ReactNode }) {
  return (
    <header className="page-header">
      <div>
        {back ? <div className="page-back">{back}</div> : null}
        <h1>{title}</h1>
        {description ? <p className="page-description">{description}</p> : null}
      </div>
      {actions ? <div className="page-actions">{actions}</div> : null}
    </header>
  );
}

export function Card({ title, actions, children, className }: { title?: ReactNode; actions?: ReactNode; children: ReactNode; className?: string }) {
  const titleId = useId();
  return (
    <section className={['card', className ?? ''].filter(Boolean).join(' ')} aria-labelledby={title ? titleId : undefined}>
      {title || actions ? (
        <header className="card-header">
          {title ? <h2 id={titleId}>{title}</h2> : <span />}
          {actions ? <div className="card-actions">{actions}</div> : null}
        </header>
      ) : null}
      <div className="card-body">{children}</div>
    </section>
  );
}
