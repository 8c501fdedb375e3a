// Models and tiers as configured (read only): prices in credits per million tokens, limits.
import { LoadState } from '../components/LoadState';
import { PageHeader } from '../components/PageHeader';
import { InputPriceKinds, OutputPriceKinds } from '../components/PriceKinds';
import { creditsColumn, formatCredits, formatMultiplier, formatNumber, formatPlanName, formatPrice } from '../format';
import { usePageTitle } from '../page-title';
import { useApiData } from '../use-api-data';
import { adminPath, type Catalog } from './admin-api';

export function AdminCatalogPage() {
  usePageTitle('Models and tiers');
  const catalog = useApiData<Catalog>(adminPath('/catalog'));
  if (catalog.data === undefined) return <LoadState error={catalog.error} onRetry={catalog.reload} />;
  const { tiers, models, default_tier: defaultTier, currency } = catalog.data;
  // Each price column lined up on its decimal point.
  const inputColumn = creditsColumn(models.map((model) => model.input_per_mtok_micros));
  const outputColumn = creditsColumn(models.map((model) => model.output_per_mtok_micros));
  return (
    <>
      <PageHeader title="Models and tiers" description="As configured in lmgate.yaml; change them there and restart." />
      <section className="card flush" aria-labelledby="tiers-title">
        <h2 id="tiers-title" className="card-title padded">
          Tiers
        </h2>
        <table className="table stacked">
          <thead>
            <tr>
              <th scope="col">Tier</th>
              <th scope="col" className="num">Requests/min</th>
              <th scope="col" className="num">Tokens/min</th>
              <th scope="col" className="num">Concurrent</th>
              <th scope="col">Models</th>
              <th scope="col">Subscription</th>
              <th scope="col" className="num">Prices</th>
            </tr>
          </thead>
          <tbody>
            {tiers.map((tier) => (
              <tr key={tier.name}>
                <th scope="row" data-label="Tier">
                  {formatPlanName(tier.name)} {tier.name === defaultTier ? <span className="badge accent">default</span> : null}
                </th>
                <td data-label="Requests/min" className="num">{formatNumber(tier.rpm)}</td>
                <td data-label="Tokens/min" className="num">{formatNumber(tier.tpm)}</td>
                <td data-label="Concurrent" className="num">{formatNumber(tier.concurrency)}</td>
                <td data-label="Models">
                  <code>{tier.models.join(', ')}</code>
                </td>
                <td data-label="Subscription">{tier.subscription ? `${formatPrice(tier.price_month, currency)} a month, ${formatCredits(tier.credits_month_micros)} credits` : 'None'}</td>
                <td data-label="Prices" className="num">{formatMultiplier(tier.price_multiplier_ppm)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section className="card flush" aria-labelledby="models-title">
        <h2 id="models-title" className="card-title padded">
          Models
        </h2>
        <table className="table stacked">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col" className="num">Input / 1M tokens</th>
              <th scope="col" className="num">Output / 1M tokens</th>
              <th scope="col" className="num">Context</th>
              <th scope="col">Tiers</th>
            </tr>
          </thead>
          <tbody>
            {models.map((model) => (
              <tr key={model.id}>
                <th scope="row" data-label="Model">
                  <code>{model.id}</code>
                </th>
                <td data-label="Input / 1M tokens" className="num">
                  {inputColumn(model.input_per_mtok_micros)}
                  <InputPriceKinds
                    input={model.input_per_mtok_micros}
                    cachedInput={model.cached_input_per_mtok_micros}
                    cacheWrite={model.cache_write_per_mtok_micros}
                    cacheWrite1h={model.cache_write_1h_per_mtok_micros}
                    format={formatCredits}
                  />
                </td>
                <td data-label="Output / 1M tokens" className="num">
                  {/* An embedding model writes no tokens. */}
                  {model.endpoints.some((endpoint) => endpoint !== 'embeddings') ? (
                    <>
                      {outputColumn(model.output_per_mtok_micros)}
                      <OutputPriceKinds output={model.output_per_mtok_micros} reasoning={model.reasoning_per_mtok_micros} format={formatCredits} />
                    </>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
                <td data-label="Context" className="num">{formatNumber(model.context)}</td>
                <td data-label="Tiers">{model.tiers.map(formatPlanName).join(', ') || 'None'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}
