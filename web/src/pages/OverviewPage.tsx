import { Fragment } from 'react';
import { Link } from 'react-router';
import { AccountStanding } from '../components/AccountStanding';
import { CodeBlock } from '../components/CodeBlock';
import { CopyButton } from '../components/CopyButton';
import { LoadState } from '../components/LoadState';
import { PageHeader } from '../components/PageHeader';
import { PlanLimits } from '../components/PlanLimits';
import { Tabs } from '../components/Tabs';
import { formatCredits, formatPlanName } from '../format';
import { useOrgs } from '../orgs';
import { usePageTitle } from '../page-title';
import { curlSnippet, javascriptSnippet, KEY_PLACEHOLDER, pythonSnippet } from '../snippets';
import type { ModelList, Overview } from '../types';
import { useApiData } from '../use-api-data';
import { LeakedKeysAlert } from '../components/LeakedKeysNotice';

const FALLBACK_MODEL = 'demo-echo';

export function OverviewPage() {
  usePageTitle('Overview');
  const overview = useApiData<Overview>('/overview');
  const models = useApiData<ModelList>('/models');
  const { orgs, current } = useOrgs();
  const data = overview.data;
  // An organisation's own address is a placeholder: it is named instead, once /orgs says whose account this is.
  const description = data === undefined || orgs === undefined ? undefined : current === null ? `Signed in as ${data.account.email}` : `Working in ${current.name}`;

  return (
    <>
      <PageHeader title="Overview" description={description} />
      <LeakedKeysAlert />
      {data === undefined ? (
        <LoadState error={overview.error} onRetry={overview.reload} />
      ) : (
        <>
          <AccountStanding standing={data.standing} plan={data.plan.name} />
          <div className="grid two">
            <section className="card" aria-labelledby="balance-title">
              <h2 id="balance-title" className="card-title">
                Balance
              </h2>
              <p className="metric">
                <span className="metric-value" data-testid="balance">
                  {formatCredits(data.balanceMicros)}
                </span>{' '}
                <span className="metric-unit">credits</span>
              </p>
              {data.balanceMicros <= 0 ? (
                <p className="muted">With no credits left, API requests are refused (HTTP 402). Redeem a code to add some.</p>
              ) : data.reservedMicros > 0 ? (
                <p className="muted">{formatCredits(data.reservedMicros)} credits are held by requests in progress.</p>
              ) : (
                <p className="muted">Each request is charged by the tokens it reads and writes.</p>
              )}
              <p className="card-footer">
                <Link to="/billing/plans#redeem">Redeem a code</Link>
                <Link to="/usage">See usage</Link>
              </p>
            </section>
            <section className="card" aria-labelledby="plan-title">
              <h2 id="plan-title" className="card-title">
                Plan
              </h2>
              <p className="metric">
                <span className="metric-value">{formatPlanName(data.plan.name)}</span>
              </p>
              {data.standing.state === 'ok' || data.standing.state === 'complimentary' ? null : (
                <p className="muted" data-testid="plan-blocked">
                  API requests are refused: see above.
                </p>
              )}
              <PlanLimits plan={data.plan} />
              <p className="card-footer">
                <Link to="/billing/plans">Compare plans</Link>
                <Link to="/models">Models you can use</Link>
              </p>
            </section>
          </div>
          <QuickStart baseUrls={data.baseUrls} model={models.data?.models[0]?.id ?? FALLBACK_MODEL} />
        </>
      )}
    </>
  );
}

function QuickStart({ baseUrls, model }: { baseUrls: string[]; model: string }) {
  const baseUrl = baseUrls[0] ?? `${window.location.origin}/v1`;
  return (
    <section className="card" aria-labelledby="quickstart-title">
      <h2 id="quickstart-title" className="card-title">
        Quick start
      </h2>
      <p>
        lmgate speaks the OpenAI API: point any OpenAI client at a base URL below and use one of your{' '}
        <Link to="/keys">API keys</Link>.
      </p>
      <h3 className="subheading">Base URLs</h3>
      <ul className="base-urls">
        {baseUrls.map((url) => (
          <li key={url}>
            <code>
              {/* A narrow screen wraps the address after a slash rather than inside a word. */}
              {url.split(/(?<=\/)/).map((part, index) => (
                <Fragment key={index}>
                  {part}
                  <wbr />
                </Fragment>
              ))}
            </code>
            <CopyButton text={url} what={`base URL ${url}`} />
          </li>
        ))}
      </ul>
      <h3 className="subheading">Your first request</h3>
      <p className="muted">
        Replace <code>{KEY_PLACEHOLDER}</code> with a key from the <Link to="/keys">API Keys</Link> page.
      </p>
      <Tabs
        label="Code examples"
        tabs={[
          { id: 'curl', label: 'curl', content: <CodeBlock code={curlSnippet(baseUrl, model)} label="curl" /> },
          { id: 'python', label: 'Python', content: <CodeBlock code={pythonSnippet(baseUrl, model)} label="Python" /> },
          { id: 'javascript', label: 'JavaScript', content: <CodeBlock code={javascriptSnippet(baseUrl, model)} label="JavaScript" /> },
        ]}
      />
    </section>
  );
}
