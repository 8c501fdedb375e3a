export function Logo() {
  return (
    <svg className="logo" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="7" />
      <path d="M9 8v16h14" />
    </svg>
  );
}
