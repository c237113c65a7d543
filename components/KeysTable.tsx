/** A list of keys and what each does, as the `?` overlays show them. */
export function KeysTable(props: { keys: readonly (readonly [string, string])[] }) {
  return (
    <table className="data compact">
      <tbody>
        {props.keys.map(([key, what]) => (
          <tr key={key}>
            <td>
              <kbd>{key}</kbd>
            </td>
            <td>{what}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
