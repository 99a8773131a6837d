import { type MouseEvent, type ReactNode, useEffect, useState } from 'react';

/** A router of a few lines: the path is the state; links push it, back and forward pop it. */
export function usePath(): string {
  const [path, setPath] = useState(window.location.pathname);
  useEffect(() => {
    const update = () => setPath(window.location.pathname);
    window.addEventListener('popstate', update);
    window.addEventListener('troupe:navigate', update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener('troupe:navigate', update);
    };
  }, []);
  return path;
}

export function navigate(to: string): void {
  if (to === window.location.pathname) return;
  window.history.pushState(null, '', to);
  window.dispatchEvent(new Event('troupe:navigate'));
  window.scrollTo(0, 0);
}

export function Link(props: { to: string; className?: string; children: ReactNode; testId?: string }) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(props.to);
  };
  return (
    <a href={props.to} className={props.className} onClick={onClick} data-testid={props.testId}>
      {props.children}
    </a>
  );
}
