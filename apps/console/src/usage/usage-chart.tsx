import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";
import { useEffect, useRef } from "react";
import type { UsageSeries } from "./usage-series.js";

// Only the parts a stacked bar chart needs, so the bundle carries no other chart type.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

const COLORS = ["#3b5bdb", "#f08c00", "#2f9e44", "#c2255c", "#7048e8", "#0c8599", "#868e96"];

/** Tokens a day, stacked by model. The table beside it holds the same figures for those who cannot see it. */
export function UsageChart({ series }: { series: UsageSeries }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: "bar",
      data: {
        labels: series.days,
        datasets: series.series.map((entry, index) => ({
          label: entry.model,
          data: entry.tokens,
          backgroundColor: COLORS[index % COLORS.length],
          maxBarThickness: 56,
        })),
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: {
          x: { stacked: true },
          y: { stacked: true, beginAtZero: true, title: { display: true, text: "Tokens (input + output)" } },
        },
      },
    });
    return () => chart.destroy();
  }, [series]);
  return (
    <div className="chart">
      <canvas
        ref={canvas}
        role="img"
        aria-label="Tokens per day, stacked by model; the table below has the figures"
      />
    </div>
  );
}
