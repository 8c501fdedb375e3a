import { LoadState } from '../components/LoadState';
import { PageHeader } from '../components/PageHeader';
import { InputPriceKinds, OutputPriceKinds } from '../components/PriceKinds';
import { formatCreditsValue, formatNumber } from '../format';
import { usePageTitle } from '../page-title';
import type { ModelList } from '../types';
import { useApiData } from '../use-api-data';

export function ModelsPage() {
  usePageTitle('Models');
  const models = useApiData<ModelList>('/models');
  return (
    <>
      <PageHeader title="Models" description="The models your plan includes. Prices are in credits per million tokens." />
      {models.data === undefined ? (
        <LoadState error={models.error} onRetry={models.reload} />
      ) : models.data.models.length === 0 ? (
        <div className="card empty">
          <p className="muted">Your plan includes no models at the moment.</p>
        </div>
      ) : (
        <div className="card flush">
          <table className="table stacked">
            <caption className="visually-hidden">Models, with prices per million tokens</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" className="num">
                  Input / 1M tokens
                </th>
                <th scope="col" className="num">
                  Output / 1M tokens
                </th>
                <th scope="col" className="num">
                  Context
                </th>
                <th scope="col" className="num">
                  Max output
                </th>
              </tr>
            </thead>
            <tbody>
              {models.data.models.map((model) => {
                // An embedding model writes no tokens: it has no output price or limit.
                const writes = model.endpoints.some((endpoint) => endpoint !== 'embeddings');
                return (
                  <tr key={model.id}>
                    <th scope="row" data-label="Model">
                      <code className="model-id">{model.id}</code>
                      {model.description ? <span className="model-description">{model.description}</span> : null}
                    </th>
                    <td data-label="Input / 1M tokens" className="num">
                      {formatCreditsValue(model.price.inputPerMillion)}
                      <InputPriceKinds
                        input={model.price.inputPerMillion}
                        cachedInput={model.price.cachedInputPerMillion}
                        cacheWrite={model.price.cacheWritePerMillion}
                        cacheWrite1h={model.price.cacheWrite1hPerMillion}
                        format={formatCreditsValue}
                      />
                    </td>
                    <td data-label="Output / 1M tokens" className="num">
                      {writes ? formatCreditsValue(model.price.outputPerMillion) : <span className="muted">—</span>}
                      {writes ? <OutputPriceKinds output={model.price.outputPerMillion} reasoning={model.price.reasoningPerMillion} format={formatCreditsValue} /> : null}
                    </td>
                    <td data-label="Context" className="num">
                      {formatNumber(model.context)} tokens
                    </td>
                    <td data-label="Max output" className="num">
                      {writes ? `${formatNumber(model.maxOutput)} tokens` : <span className="muted">—</span>}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
