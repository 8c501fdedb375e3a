// What `lmgate help [COMMAND [SUBCOMMAND]]`, `lmgate COMMAND --help` and a mistake print:
// the overview, and each command's and subcommand's usage, options and notes.

const CONFIG_NOTE = `Every command reads the same configuration as the server: lmgate.yaml (or .yml, .json)
in the working directory, or the file LMGATE_CONFIG names, then the environment
(LMGATE_*, DATABASE_URL for PostgreSQL, REDIS_URL for shared mode). Without DATABASE_URL
the store is the SQLite file in the data directory (./data/lmgate.db).`;

const CONTROLS = `controls: --expires DATE, --models P,P (globs), --ips CIDR,CIDR, --rpm N,
          --credit-limit N or N/month; the word none clears one. --models and --ips
          may also be given more than once.`;

/** Each subcommand's help, by `command subcommand` (or `command` for one without). */
const HELP: Record<string, string> = {
  serve: `usage: lmgate serve [--port N] [--host H] [--workers N]

Runs the server (what npm start runs). On the first start on an empty store it creates a
demo account and prints its API key once.

  --port N      the port (else LMGATE_PORT, then PORT, then server.port; 8080)
  --host H      the address to listen on (else LMGATE_HOST, then server.host; 127.0.0.1)
  --workers N   N processes sharing the port (else LMGATE_WORKERS, server.workers);
                more than 1 needs shared mode (REDIS_URL) and PostgreSQL

SIGTERM or SIGINT drains in-flight answers and exits; while starting, it exits at once.`,
  migrate: `usage: lmgate migrate

Applies pending migrations to the store and exits (serve does this at every start).`,
  'accounts create': `usage: lmgate accounts create --email E [--tier T] [--name N] [--credits N]

Creates an account, with N credits to start with.`,
  'accounts list': 'usage: lmgate accounts list\n\nEvery account, with its status and tier.',
  'accounts show': 'usage: lmgate accounts show A\n\nOne account, with its balance.',
  'accounts suspend': 'usage: lmgate accounts suspend A\n\nRefuses every request of the account (403) until it is reactivated.',
  'accounts reactivate': 'usage: lmgate accounts reactivate A\n\nLifts a suspension.',
  'accounts set-tier': `usage: lmgate accounts set-tier A T [--comp [--until DATE]]

Moves the account to tier T. --comp gives the tier without the subscription it needs
(complimentary), until the end of DATE (UTC) when --until is given.`,
  'accounts set-price-multiplier': 'usage: lmgate accounts set-price-multiplier A M\n\nEvery price × M for the account: 0.9 is 10 % off, 1.2 is 20 % more.',
  'accounts set-role': 'usage: lmgate accounts set-role A operator|customer\n\nOperators use the admin API and the console with their dashboard session.',
  'accounts set-password': 'usage: lmgate accounts set-password A\n\nThe password from the first line of stdin, or asked for twice at a terminal.',
  'accounts reset-link': 'usage: lmgate accounts reset-link A\n\nA one-time link (valid an hour) to choose a new password.',
  'orgs create': `usage: lmgate orgs create NAME --owner EMAIL [--tier T]

An organisation: one balance, one tier or plan, its members with roles. The owner is an
existing account (lmgate accounts create makes one).`,
  'orgs list': 'usage: lmgate orgs list\n\nEvery organisation, with its members and balance.',
  'orgs show': 'usage: lmgate orgs show ORG\n\nThe organisation (by id or name), its members and roles, its budgets.',
  'orgs add-member': `usage: lmgate orgs add-member ORG EMAIL [--role ROLE]

Adds an existing account to the organisation, or changes its role. ROLE: owner, admin,
billing, member (the default).`,
  'orgs remove-member': `usage: lmgate orgs remove-member ORG EMAIL [--revoke-keys]

Removes the person: their dashboard stops acting for the organisation at once. The keys
they made stay the organisation's, or stop working everywhere with --revoke-keys. The last
owner cannot be removed.`,
  'orgs require-sso': `usage: lmgate orgs require-sso ORG on|off

With on, the organisation's members act for it in the dashboard only when signed in with
OpenID Connect (auth.oidc); their password sessions show their own account.`,
  'budgets set': `usage: lmgate budgets set --org ORG [--member EMAIL] --monthly N

A monthly budget (calendar months, UTC) of N credits: a member's, or without --member the
whole organisation's. A request that would pass it gets 402 naming the budget. --monthly
none removes it.`,
  'budgets list': 'usage: lmgate budgets list --org ORG\n\nThe organisation\'s budgets.',
  'alerts set': `usage: lmgate alerts set --org ORG [--balance-below N] [--budget-thresholds P,P]

Alerts of the organisation (or account): when its balance falls below N credits, and when
spending reaches each percentage P of a monthly budget (its own or a member's; 50,80,100
unless set). Each crossing sends one balance.low or budget.threshold webhook and one mail
to the owners and billing members (a person's account: its own address), once: a balance
alert again after a top-up lifts it back over N, a budget's in the next month or once the
budget is raised. --balance-below none and --budget-thresholds default clear them.`,
  'alerts show': 'usage: lmgate alerts show --org ORG\n\nThe organisation\'s (or account\'s) alert thresholds.',
  'webhooks add': `usage: lmgate webhooks add --org ORG URL --events T,T

Registers a webhook endpoint of the organisation (or account) and prints its signing
secret once. Events: balance.low, budget.threshold, payment.succeeded, payment.failed,
key.revoked, subscription.updated. Deliveries follow Standard Webhooks (webhook-id,
webhook-timestamp, webhook-signature), are retried for a day, in order per endpoint.`,
  'webhooks list': 'usage: lmgate webhooks list --org ORG\n\nThe endpoints of the organisation (or account), without their secrets.',
  'webhooks remove': 'usage: lmgate webhooks remove ID\n\nThe endpoint receives nothing more; its pending deliveries are dropped.',
  'webhooks rotate': `usage: lmgate webhooks rotate ID

Gives the endpoint a new signing secret, printed once. For 24 hours the old one signs
beside it (two v1 signatures), so the receiver can switch without missing an event.`,
  'keys create': `usage: lmgate keys create A [--name N] [controls]
       lmgate keys create --org ORG --member EMAIL [--name N] [controls]

Creates an API key for the account and prints its secret once.

${CONTROLS}`,
  'keys update': `usage: lmgate keys update KEY_ID [--name N] [controls]

Renames a key, or changes its controls.

${CONTROLS}`,
  'keys list': 'usage: lmgate keys list A\n\nThe account\'s keys, masked; never a secret.',
  'keys revoke': 'usage: lmgate keys revoke KEY_ID\n\nThe key stops working on every running instance within a second.',
  'credits grant': 'usage: lmgate credits grant A N --reason R\n       lmgate credits grant --org ORG N --reason R\n\nAdds N credits (a ledger entry that keeps the reason).',
  'credits adjust': 'usage: lmgate credits adjust A ±N --reason R\n\nAdds or takes credits, never below zero: adjust A -5 --reason R takes 5.',
  'credits ledger': 'usage: lmgate credits ledger A [--limit K]\n\nThe newest K ledger entries (50) and the balance.',
  'codes create': 'usage: lmgate codes create --credits N [--count K] [--expires DATE]\n\nRedemption codes worth N credits each, printed once (only a hash is stored).',
  'codes list': 'usage: lmgate codes list\n\nEvery code: its last characters (LMG-…-7K3Q), amount, expiry, redeemed by and when.',
  'codes disable': 'usage: lmgate codes disable CODE_ID\n\nThe code no longer redeems.',
  'admin-keys create': `usage: lmgate admin-keys create --scope S[,S] [--name N]

An admin API key; prints the secret once. Scopes: read, accounts, credits, keys; give
several separated by commas or with --scope more than once.`,
  'admin-keys list': 'usage: lmgate admin-keys list\n\nEvery admin key, masked.',
  'admin-keys revoke': 'usage: lmgate admin-keys revoke ID\n\nThe admin key stops working.',
  audit: 'usage: lmgate audit [--limit K]\n\nThe newest K admin actions (50): who, what, before and after.',
  'payments list': 'usage: lmgate payments list [--limit K]\n\nPayments received through Stripe, newest first.',
  'payments replay': 'usage: lmgate payments replay EVENT_ID\n\nApplies a stored Stripe event again (idempotent).',
  upstreams: `usage: lmgate upstreams [--url URL]

Each upstream deployment's health, in-flight requests, outcomes and latency, as the running
server sees it (its /metrics; --url names another server).`,
  'usage export': `usage: lmgate usage export --from DATE --to DATE [--account A | --org ORG] [--format csv|jsonl]

Writes the raw usage records of the period to stdout, oldest first, read a page at a time
so memory stays flat however many there are: CSV with a header line (the dashboard's
columns, then id, account_id, member_id), or with --format jsonl one JSON object per line.
Every account's records, or one account's (--account, an id or email) or organisation's
(--org, an id or name). DATE is a UTC day, YYYY-MM-DD; --to includes that whole day. Either
may also be an ISO 8601 timestamp with a zone (2026-01-31T12:00:00Z); --to then ends just
before it.`,
  'usage verify': `usage: lmgate usage verify --from DATE --to DATE

Checks, for each UTC day of the period (--to included), the daily rollups against the raw
usage records, and each account's usage charges in the ledger against its records. Prints
each difference and exits 1; exits 0 when they agree. Days whose raw records are past the
retention are skipped.`,
  'store copy': `usage: lmgate store copy --to URL

Copies the SQLite store into an empty PostgreSQL database (postgres://...) and verifies it.
Stop the server first, then start it with DATABASE_URL=URL.`,
};

export const OVERVIEW_HELP = `usage: lmgate <command> [options]   (every command takes --json)

  serve [--port N] [--host H] [--workers N]    run the server (what npm start runs)
  migrate                                      apply pending migrations and exit
  accounts create | list | show | suspend | reactivate | set-tier | set-price-multiplier
           | set-role | set-password | reset-link
  keys create | update | list | revoke         API keys and their controls
  credits grant | adjust | ledger              balances, through the ledger
  orgs create | list | show | add-member | remove-member | require-sso
                                               organisations: members, roles, one balance
  budgets set | list                           an organisation's monthly budgets
  alerts set | show                            alerts on a balance and on budgets
  webhooks add | list | remove | rotate        an organisation's webhook endpoints
  codes create | list | disable                redemption codes
  admin-keys create | list | revoke            keys of the admin API
  audit [--limit K]                            the newest admin actions
  payments list | replay                       payments received through Stripe
  upstreams [--url URL]                        upstream deployments' health
  store copy --to URL                          copy the SQLite store into PostgreSQL
  usage export | verify --from DATE --to DATE  raw usage records out; check the rollups

  lmgate help COMMAND [SUBCOMMAND], or lmgate COMMAND [SUBCOMMAND] --help: one command
  lmgate --version

A is an account id or email. N is in credits, up to 6 decimals (1 credit = 1,000,000
micro-credits).

${CONFIG_NOTE}`;

/** The help for `words` (a command, maybe a subcommand), or undefined for no such command. */
export function helpFor(words: string[]): string | undefined {
  const [command, subcommand] = words;
  if (command === undefined) return OVERVIEW_HELP;
  const own = HELP[command] ?? (subcommand === undefined ? undefined : HELP[`${command} ${subcommand}`]);
  if (own) return `${own}\n\n${CONFIG_NOTE}`;
  const subcommands = Object.keys(HELP).filter((key) => key.startsWith(`${command} `));
  if (subcommands.length === 0) return undefined;
  const usages = subcommands.map((key) => `  ${HELP[key]!.split('\n')[0]!.replace(/^usage: /, '')}`);
  return `usage:\n${usages.join('\n')}\n\nlmgate ${command} SUBCOMMAND --help for one of them.\n\n${CONFIG_NOTE}`;
}

/** Whether `command` is one lmgate has. */
export function isCommand(command: string): boolean {
  return Object.keys(HELP).some((key) => key === command || key.startsWith(`${command} `));
}

